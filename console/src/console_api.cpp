// console/src/console_api.cpp
#include "console_api.hpp"

#include <chrono>
#include <ctime>

#include "pgmq/console/alerts.hpp"
#include "pgmq/console/api_error.hpp"
#include "pgmq/console/queries.hpp"
#include "pgmq/console/stream_queries.hpp"
#include "stream_api.hpp"

namespace pgmq::console {
namespace {

using nlohmann::json;

constexpr int kDefaultLimit = 50;
constexpr int kMaxLimit = 200;
// A queue dropped between the catalog and the count: count again.
constexpr int kDepthAttempts = 3;
// The overview's sparklines are 64 pixels wide: an hour of 10-second
// samples for 1,000 queues would be 720,000 numbers every refresh.
constexpr std::size_t kOverviewRatePoints = 60;

std::optional<long long> Integer(const json &value)
{
	if (value.is_number_integer())
		return value.get<long long>();
	if (value.is_string()) {
		try {
			std::size_t used = 0;
			long long parsed = std::stoll(value.get<std::string>(), &used);
			if (used == value.get<std::string>().size())
				return parsed;
		} catch (const std::exception &) {
		}
	}
	return std::nullopt;
}

std::optional<double> Number(const json &value)
{
	if (value.is_number())
		return value.get<double>();
	return std::nullopt;
}

json OrNull(const std::optional<long long> &value) { return value ? json(*value) : json(nullptr); }
json OrNull(const std::optional<double> &value) { return value ? json(*value) : json(nullptr); }

long long ToLong(const Value &value) { return value ? std::stoll(*value) : 0; }

std::string UtcNow()
{
	std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
	char text[32];
	std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
	return text;
}

// Runs fn with a session; database errors become ApiErrors. The rule for
// queue tables gone since the start (an older pgmq-cpp put back): none is read.
template <typename Fn>
auto WithSession(Pool &pool, Fn fn)
{
	try {
		auto session = pool.Acquire();
		return fn(*session);
	} catch (const DatabaseError &e) {
		if (e.sqlstate() == "42883" && std::string(e.what()).find("_tables_running_foreign_code") != std::string::npos)
			throw ApiError(503,
						   "this database's pgmq cannot say which queue tables are safe to read "
						   "(pgmq._tables_running_foreign_code is gone since the console started): update it with "
						   "ALTER EXTENSION pgmq UPDATE, or restart the console",
						   e.sqlstate());
		throw ApiError(HttpStatusForSqlstate(e.sqlstate(), e.connection_lost()), e.what(), e.sqlstate());
	}
}

// Runs fn in a transaction, again when a queue was dropped meanwhile (the
// catalog listed it, the next statement found no table).
template <typename Fn>
auto InTransaction(pgmq::console::Session &session, Fn fn)
{
	for (int attempt = 1;; ++attempt) {
		try {
			Transaction transaction(session);
			auto result = fn();
			transaction.Commit();
			return result;
		} catch (const DatabaseError &e) {
			if (e.sqlstate() != "42P01" || attempt >= kDepthAttempts)
				throw;
		}
	}
}

bool BoolOr(const json &object, const char *key, bool otherwise)
{
	auto it = object.find(key);
	return it != object.end() && it->is_boolean() ? it->get<bool>() : otherwise;
}

// Why a table is not read: pgmq's rule names what it carries ("code"); the
// owner rule names the owner ("owner").
std::string RefusalText(const json &reason, const json &kind, const std::string &role)
{
	if (kind == "owner")
		return reason.get<std::string>() + ": without pgmq-cpp's rule for queue tables the console cannot tell " +
			   "what code a read of it would run with role " + role + "'s rights";
	return "its table carries " + reason.get<std::string>();
}

// 403 when the queue's table would run another role's code as the
// console's role (the catalog entry's "refused", with its reason).
void RefuseForeignCode(const json &entry, const std::string &name, const char *key, const char *what,
					   const std::string &role)
{
	const json &reason = entry.value(key, json());
	if (reason.is_string())
		throw ApiError(403,
					   "pgmq-console does not read " + std::string(what) + " \"" + name + "\": " +
						   RefusalText(reason, entry.value(std::string(key) + "_kind", json()), role),
					   "42501");
}

// 409 for an action that needs what only pgmq-cpp has.
void RequireFeature(bool available, const std::string &what, const pg::PgmqFeatures &features)
{
	if (!available)
		throw ApiError(409, what + " needs pgmq-cpp: not available with " + pg::ShortName(features));
}

std::string Plural(long long count) { return std::to_string(count) + (count == 1 ? " message" : " messages"); }

}  // namespace

std::string ConsoleApi::Start()
{
	WithSession(pool_, [&](pgmq::console::Session &session) {
		catalog_.Detect(session, options_.trust_queue_owners);
		return 0;
	});
	if (!catalog_.features().present)
		throw ApiError(503, "the database offers " + pg::Describe(catalog_.features()));
	// Every queue owner's code would run with the role's rights.
	if (catalog_.TableCheck() == "trust" && catalog_.role_privileged())
		throw ApiError(403, "--trust-queue-owners with role " + catalog_.role() +
								", which has SUPERUSER, CREATEROLE, BYPASSRLS or REPLICATION: every queue owner's "
								"code would run with those powers; connect as a role without them");
	return catalog_.LogLine();
}

bool ConsoleApi::Healthy()
{
	try {
		auto session = pool_.Acquire();
		session->Exec("SELECT 1");
		return true;
	} catch (const DatabaseError &) {
		return false;
	}
}

json ConsoleApi::Session()
{
	return WithSession(pool_, [&](pgmq::console::Session &session) {
		Row row = session.Exec(kSessionSql).at(0);
		json answer{{"role", row[0].value_or("")},
					{"database", row[1].value_or("")},
					{"server_version", row[2].value_or("")},
					{"actions", options_.actions},
					{"csrf_token", token_},
					{"sample_seconds", options_.sample_seconds},
					{"history_seconds", options_.history_seconds}};
		catalog_.Describe(answer);
		return answer;
	});
}

json ConsoleApi::QueueObject(const json &catalog, const Row *depth, std::size_t rate_points) const
{
	const std::string name = catalog.at("name").get<std::string>();
	const json &policies = catalog.at("policies");
	const json &partitions = catalog.at("partitions");
	const json &metrics = catalog.at("metrics");
	AlertFigures figures;
	long long leased = 0, delayed = 0;
	std::optional<double> oldest_visible;
	if (metrics.is_object()) {
		figures.visible = Integer(metrics.value("queue_visible_length", json())).value_or(0);
		figures.oldest_msg_age_sec = Number(metrics.value("oldest_msg_age_sec", json()));
		// Counts the default partitions of the queue and of its archive, as
		// the alert query does.
		if (catalog.value("partitioned", false))
			figures.default_partition_rows = Integer(metrics.value("default_partition_length", json()));
		// Every message is visible, unless the depth statement counted it.
		if (figures.visible > 0)
			oldest_visible = figures.oldest_msg_age_sec;
	}
	if (depth) {
		figures.visible = ToLong((*depth)[1]);
		leased = ToLong((*depth)[2]);
		delayed = ToLong((*depth)[3]);
		oldest_visible = (*depth)[4] ? std::optional<double>(std::stod(*(*depth)[4])) : std::nullopt;
	}
	if (policies.is_object())
		figures.dead_lettered = Integer(policies.value("dead_lettered", json()));
	// null, not false, where the database's pgmq has no pause or policies.
	const json paused = catalog.value("paused", json());
	figures.paused = BoolOr(catalog, "paused", false);
	const json dead_letter_for = catalog.value("dead_letter_for", json());
	figures.dead_letter_queue = dead_letter_for.is_array() && !dead_letter_for.empty();
	if (partitions.is_array())
		for (const auto &partition : partitions) {
			// The queue table's row (the archive has one too).
			if (partition.value("parent_table", "") != "pgmq." + catalog.value("relname", ""))
				continue;
			figures.runway_messages = Integer(partition.value("runway_messages", json()));
			figures.runway_seconds = Number(partition.value("runway_seconds", json()));
			figures.partition_column = partition.value("partition_column", "");
			figures.premake = Integer(partition.value("premake", json()));
			figures.partition_interval = Integer(partition.value("partition_interval", json()));
		}
	bool has_policy = policies.is_object() && policies.value("dead_letter_queue", json()).is_string();
	// A stream's messages are neither visible, leased nor delayed: each
	// group has its own cursor (its figures are in "streams"). Total: the
	// messages the stream holds.
	const bool stream = IsStream(catalog);
	figures.stream = stream || BoolOr(catalog, "listed_stream", false);
	auto unless_stream = [&](const json &value) { return stream ? json(nullptr) : value; };
	return json{{"name", name},
				{"partitioned", BoolOr(catalog, "partitioned", false)},
				{"unlogged", BoolOr(catalog, "unlogged", false)},
				{"paused", paused},
				{"dead_letter_for", dead_letter_for},
				{"stream", catalog.value("stream", json())},
				{"visible", unless_stream(figures.visible)},
				{"leased", unless_stream(leased)},
				{"delayed", unless_stream(delayed)},
				{"total", figures.visible + leased + delayed},
				{"oldest_visible_age_sec", unless_stream(OrNull(oldest_visible))},
				{"dead_letter_queue", has_policy ? policies.at("dead_letter_queue") : json(nullptr)},
				{"max_deliveries", has_policy ? policies.value("max_deliveries", json()) : json(nullptr)},
				{"dead_lettered", has_policy ? OrNull(figures.dead_lettered) : json(nullptr)},
				{"runway_messages", OrNull(figures.runway_messages)},
				{"runway_seconds", OrNull(figures.runway_seconds)},
				{"default_partition_rows", OrNull(figures.default_partition_rows)},
				{"alerts", FiringAlerts(figures)},
				{"send_rate", rates_.SendRates(name, rate_points)},
				{"read_rate", rates_.ReadRates(name, rate_points)}};
}

json ConsoleApi::Queues(pgmq::console::Session &session, const Value &name, std::size_t rate_points, int &hidden,
						json &refused, json *streams)
{
	std::vector<json> catalog;
	std::vector<std::string> relnames;
	std::vector<int> depth_index;
	hidden = 0;
	refused = json::array();
	for (json &entry : catalog_.Rows(session, name)) {
		bool readable = BoolOr(entry, "readable", false);
		if (entry.value("refused", json()).is_string())
			refused.push_back({{"name", entry.at("name")},
							   {"reason", entry.at("refused")},
							   {"kind", entry.value("refused_kind", json())},
							   {"explanation", RefusalText(entry.at("refused"), entry.value("refused_kind", json()),
														   catalog_.role())}});
		else
			hidden += readable ? 0 : 1;
		const json &metrics = entry.at("metrics");
		bool some_not_visible = metrics.is_object() && Integer(metrics.value("queue_length", json())) >
															Integer(metrics.value("queue_visible_length", json()));
		depth_index.push_back(some_not_visible ? static_cast<int>(relnames.size()) : -1);
		if (some_not_visible)
			relnames.push_back(entry.at("relname").get<std::string>());
		catalog.push_back(std::move(entry));
	}
	// In the catalog's transaction: the tables were locked when checked.
	std::vector<Row> depth;
	if (!relnames.empty())
		depth = session.Exec(DepthSql(relnames));
	// UNION ALL keeps no order: rows name their table's index.
	std::vector<const Row *> by_index(relnames.size(), nullptr);
	for (const Row &row : depth)
		by_index.at(static_cast<std::size_t>(ToLong(row.at(0)))) = &row;
	json queues = json::array();
	if (streams)
		*streams = catalog_.shape().streams ? json::array() : json(nullptr);
	for (std::size_t i = 0; i < catalog.size(); ++i)
		if (BoolOr(catalog[i], "readable", false)) {
			queues.push_back(QueueObject(
				catalog[i], depth_index[i] >= 0 ? by_index[static_cast<std::size_t>(depth_index[i])] : nullptr,
				rate_points));
			if (streams && IsStream(catalog[i]))
				streams->push_back(StreamSummary(catalog[i]));
		}
	return queues;
}

json ConsoleApi::Overview()
{
	return WithSession(pool_, [&](pgmq::console::Session &session) {
		return InTransaction(session, [&] {
			int hidden = 0;
			json refused, streams;
			json queues = Queues(session, std::nullopt, kOverviewRatePoints, hidden, refused, &streams);
			// streams: null where the database's pgmq has none.
			return json{{"generated_at", UtcNow()},
						{"hidden_queues", hidden},
						{"refused_queues", std::move(refused)},
						{"queues", std::move(queues)},
						{"streams", std::move(streams)}};
		});
	});
}

json ConsoleApi::CatalogEntry(pgmq::console::Session &session, const std::string &name)
{
	auto rows = catalog_.Rows(session, name);
	if (rows.empty())
		throw ApiError(404, "queue \"" + name + "\" does not exist");
	return rows[0];
}

// One queue's catalog entry, readable by the role, or 403 (refused) or 404.
json ConsoleApi::Catalog(pgmq::console::Session &session, const std::string &name)
{
	json entry = CatalogEntry(session, name);
	RefuseForeignCode(entry, name, "refused", "queue", catalog_.role());
	if (!BoolOr(entry, "readable", false))
		throw ApiError(404, "queue \"" + name + "\" does not exist or you may not read it", "42501");
	return entry;
}

json ConsoleApi::Queue(const std::string &name)
{
	return WithSession(pool_, [&](pgmq::console::Session &session) { return InTransaction(session, [&] {
		json entry = Catalog(session, name);
		int hidden = 0;
		json refused;
		json queues = Queues(session, name, 0, hidden, refused);
		if (queues.empty())
			throw ApiError(404, "queue \"" + name + "\" does not exist");
		json policies = entry.at("policies");
		if (policies.is_object())
			policies.erase("queue_name");
		json partitions = entry.at("partitions").is_array() ? entry.at("partitions") : json::array();
		// A stream's groups, and its partitions as pgmq.stream_partitions
		// has them: its table passed the rule in this transaction (Catalog).
		json stream = nullptr;
		if (IsStream(entry))
			stream = json{{"groups", StreamGroups(entry)}, {"partitions", StreamPartitions(session, name)}};
		return json{{"queue", queues[0]}, {"policies", policies}, {"partitions", partitions}, {"stream", stream}};
	}); });
}

// A stream's partitions, or {"error": ...} when the role may read the
// stream but not its partitions (pgmq.stream_partitions reads each one):
// the groups are still shown. A savepoint keeps the transaction, and the
// catalog's locks, going.
json ConsoleApi::StreamPartitions(pgmq::console::Session &session, const std::string &name)
{
	session.Exec("SAVEPOINT stream_partitions");
	try {
		auto rows = session.Exec(kStreamPartitionsSql, {name});
		session.Exec("RELEASE SAVEPOINT stream_partitions");
		return json::parse(rows.at(0).at(0).value_or("[]"));
	} catch (const DatabaseError &e) {
		if (e.sqlstate() != "42501")
			throw;
		session.Exec("ROLLBACK TO SAVEPOINT stream_partitions");
		return json{{"error", e.what()}, {"sqlstate", e.sqlstate()}};
	}
}

json ConsoleApi::Messages(const std::string &name, const MessageQuery &query)
{
	MessageSource source;
	if (query.source == "queue")
		source = MessageSource::kQueue;
	else if (query.source == "archive")
		source = MessageSource::kArchive;
	else if (query.source == "dead")
		source = MessageSource::kDeadLetters;
	else
		throw ApiError(400, "source: expected queue, archive or dead, got \"" + query.source + "\"");
	if (query.order != "newest" && query.order != "oldest")
		throw ApiError(400, "order: expected newest or oldest, got \"" + query.order + "\"");
	int limit = kDefaultLimit;
	if (!query.limit.empty()) {
		auto parsed = Integer(json(query.limit));
		if (!parsed || *parsed < 1 || *parsed > kMaxLimit)
			throw ApiError(400, "limit: expected 1 to " + std::to_string(kMaxLimit) + ", got \"" + query.limit + "\"");
		limit = static_cast<int>(*parsed);
	}
	Value cursor;
	if (!query.cursor.empty()) {
		if (!Integer(json(query.cursor)))
			throw ApiError(400, "cursor: expected a msg_id, got \"" + query.cursor + "\"");
		cursor = query.cursor;
	}
	Value header;
	if (!query.header.empty()) {
		json parsed = json::parse(query.header, nullptr, /*allow_exceptions=*/false);
		if (!parsed.is_object())
			throw ApiError(400, "header: expected a JSON object such as {\"tenant\": \"acme\"}");
		header = query.header;
	}
	Value path = query.path.empty() ? Value() : Value(query.path);
	return WithSession(pool_, [&](pgmq::console::Session &session) { return InTransaction(session, [&] {
		json entry = Catalog(session, name);
		std::string relname;
		Value dead_letters_of;
		if (source == MessageSource::kQueue) {
			relname = entry.at("relname").get<std::string>();
		} else if (source == MessageSource::kArchive) {
			RefuseForeignCode(entry, name, "archive_refused", "the archive of queue", catalog_.role());
			if (!entry.at("archive_relname").is_string())
				throw ApiError(404, "the archive of \"" + name + "\" does not exist or you may not read it");
			relname = entry.at("archive_relname").get<std::string>();
		} else {
			const json &policies = entry.at("policies");
			RequireFeature(catalog_.features().policies, "a dead-letter queue", catalog_.features());
			if (!policies.is_object() || !policies.value("dead_letter_queue", json()).is_string())
				throw ApiError(404, "\"" + name + "\" has no dead-letter queue");
			relname = Catalog(session, policies.at("dead_letter_queue").get<std::string>()).at("relname");
			dead_letters_of = name;
		}
		auto rows = session.Exec(MessagesSql(relname, source, query.order == "newest"),
								 {cursor, header, path, std::to_string(limit + 1), dead_letters_of});
		json messages = json::parse(rows.at(0).at(0).value_or("[]"));
		json next = nullptr;
		if (messages.size() > static_cast<std::size_t>(limit)) {
			messages.erase(messages.end() - 1);
			next = messages.back().at("msg_id");
		}
		return json{{"source", query.source}, {"messages", std::move(messages)}, {"next_cursor", next}};
	}); });
}

json ConsoleApi::Act(const std::string &name, const std::string &action, const std::string &body)
{
	if (!options_.actions)
		throw ApiError(403, "this console is read-only (start it with --allow-actions)");
	json request = json::parse(body.empty() ? "{}" : body, nullptr, /*allow_exceptions=*/false);
	if (!request.is_object())
		throw ApiError(400, "the body must be a JSON object");
	const pg::PgmqFeatures &features = catalog_.features();
	if (action == "redrive" || action == "redrive_all")
		RequireFeature(features.redrive, action == "redrive" ? "redrive" : "redrive_all", features);
	if (action == "pause" || action == "resume")
		RequireFeature(features.pause, action, features);
	if (action == "seek" && !catalog_.shape().streams)
		throw ApiError(409, "seek needs streams, which " + pg::ShortName(features) + " does not have: not available");
	return WithSession(pool_, [&](pgmq::console::Session &session) {
		if (action == "purge") {
			// TRUNCATE fires the table's triggers as the console's role: asked
			// here to say why, under the catalog's lock; pgmq-cpp's
			// purge_queue checks again under its own.
			return InTransaction(session, [&] {
				RefuseForeignCode(CatalogEntry(session, name), name, "refused", "queue", catalog_.role());
				long long count = ToLong(session.Exec("SELECT pgmq.purge_queue($1)", {name}).at(0).at(0));
				return json{{"done", "purged " + Plural(count) + " from " + name}, {"count", count}};
			});
		}
		if (action == "redrive") {
			Value qty;
			const json &given = request.value("qty", json());
			if (!given.is_null()) {
				if (!given.is_number_integer() || given.get<long long>() < 1 || given.get<long long>() > INT32_MAX)
					throw ApiError(400, "qty: expected a positive integer or null");
				qty = std::to_string(given.get<long long>());
			}
			json entry = Catalog(session, name);
			const json &policies = entry.at("policies");
			if (!policies.is_object() || !policies.value("dead_letter_queue", json()).is_string())
				throw ApiError(409, "\"" + name + "\" has no dead-letter queue to redrive from");
			std::string dead = policies.at("dead_letter_queue");
			// Both tables' triggers fire (DELETE, INSERT); pgmq.redrive checks
			// both again under its locks.
			RefuseForeignCode(CatalogEntry(session, dead), dead, "refused", "queue", catalog_.role());
			long long count = ToLong(session.Exec("SELECT pgmq.redrive($1, $2, $3::int)", {dead, name, qty}).at(0).at(0));
			return json{{"done", "moved " + Plural(count) + " from " + dead + " back to " + name}, {"count", count}};
		}
		if (action == "redrive_all") {
			// As purge: pgmq's own function decides what the role may do.
			json queues = json::array();
			long long count = 0;
			std::string to;
			for (const Row &row : session.Exec("SELECT queue_name, redriven FROM pgmq.redrive_all($1)", {name})) {
				long long moved = ToLong(row.at(1));
				queues.push_back(json{{"queue_name", row.at(0).value_or("")}, {"redriven", moved}});
				to += (to.empty() ? "" : ", ") + std::to_string(moved) + " to " + row.at(0).value_or("");
				count += moved;
			}
			std::string done = "moved " + Plural(count) + " from " + name;
			if (queues.size() == 1)
				done += " back to " + queues[0].at("queue_name").get<std::string>();
			else if (queues.size() > 1)
				done += " back to their queues: " + to;
			return json{{"done", done}, {"count", count}, {"queues", std::move(queues)}};
		}
		if (action == "pause" || action == "resume") {
			session.Exec("SELECT pgmq." + action + "($1)", {name});
			return json{{"done", (action == "pause" ? "paused " : "resumed ") + name}, {"count", 0}};
		}
		if (action == "seek") {
			std::string group, since;
			CheckSeekRequest(request, group, since);
			// As purge: only a stream whose table passes the rule, checked
			// under the catalog's lock; pgmq.seek then decides what the role
			// may do.
			return InTransaction(session, [&] {
				json entry = CatalogEntry(session, name);
				RefuseForeignCode(entry, name, "refused", "stream", catalog_.role());
				if (!IsStream(entry))
					throw ApiError(409, "\"" + name + "\" is not a stream");
				session.Exec(kStreamSeekSql, {name, group, since});
				return json{{"done", "group " + group + " of " + name + " reads again from " + since}, {"count", 0}};
			});
		}
		throw ApiError(404, "no action \"" + action + "\" (purge, redrive, redrive_all, pause, resume, seek)");
	});
}

}  // namespace pgmq::console
