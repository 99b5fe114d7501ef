// console/src/console_api.hpp
// The JSON API behind the page (docs/console.md#the-json-api): every figure
// and action comes from PostgreSQL as the console's role. Throws ApiError.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "catalog.hpp"
#include "database.hpp"
#include "pgmq/console/options.hpp"
#include "pgmq/console/rate_history.hpp"

namespace pgmq::console {

struct MessageQuery {
	std::string source = "queue";  // queue, archive, dead
	std::string order = "newest";  // newest, oldest
	std::string cursor, limit, header, path;
};

class ConsoleApi {
  public:
	ConsoleApi(Pool &pool, const RateHistory &rates, const Options &options, std::string token)
		: pool_(pool), rates_(rates), options_(options), token_(std::move(token))
	{
	}
	// Asks the database which pgmq it runs (once, before serving) and returns
	// the line to log. Throws ApiError: also for --trust-queue-owners with a
	// role whose powers every queue owner's code would then have.
	std::string Start();
	nlohmann::json Session();
	// /healthz: whether a database session answers.
	bool Healthy();
	nlohmann::json Overview();
	nlohmann::json Queue(const std::string &name);
	nlohmann::json Messages(const std::string &name, const MessageQuery &query);
	// action: purge, redrive, redrive_all, pause, resume, seek; body: the request's JSON.
	nlohmann::json Act(const std::string &name, const std::string &action, const std::string &body);

  private:
	// The catalog rows ($1 NULL: every queue) and their depth, as the
	// page's queue objects with rate series of at most rate_points (0: all);
	// hidden counts queues the role may not read, refused lists (name,
	// reason) those whose tables would run another role's code as the
	// console's role. Run in a transaction: the catalog locks what it checks.
	// streams, when given: the overview's stream objects (null without
	// streams in the database's pgmq).
	nlohmann::json Queues(pgmq::console::Session &session, const Value &name, std::size_t rate_points, int &hidden,
						  nlohmann::json &refused, nlohmann::json *streams = nullptr);
	// A queue's catalog entry, whatever it says; Catalog: only a readable
	// queue's (403 when refused, else 404).
	nlohmann::json CatalogEntry(pgmq::console::Session &session, const std::string &name);
	nlohmann::json Catalog(pgmq::console::Session &session, const std::string &name);
	nlohmann::json QueueObject(const nlohmann::json &catalog, const Row *depth, std::size_t rate_points) const;
	nlohmann::json StreamPartitions(pgmq::console::Session &session, const std::string &name);

	Pool &pool_;
	const RateHistory &rates_;
	const Options &options_;
	std::string token_;
	QueueCatalog catalog_;
};

}  // namespace pgmq::console
