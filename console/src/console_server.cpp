// console/src/console_server.cpp
#include "console_server.hpp"

#include <cstdio>

#include "assets.hpp"
#include "pgmq/console/api_error.hpp"

namespace pgmq::console {
namespace {

using nlohmann::json;

// A page's request is small: it has this long to arrive whole, and the
// client this long to take the answer.
constexpr std::chrono::seconds kRequestDeadline{5};
constexpr std::chrono::seconds kSendTimeout{10};
// Requests served at once; a slow client holds one for the deadline at most.
constexpr std::size_t kThreads = 16;
constexpr std::size_t kMaxBody = 64 * 1024;
const char kQueueRoute[] = "/api/queues/([^/]+)";
// 200 when a database session answers, else 503: the images' HEALTHCHECK.
const char kHealthRoute[] = "/healthz";

RequestFacts Facts(const httplib::Request &request)
{
	return {request.method,
			request.get_header_value("Host"),
			request.get_header_value("Origin"),
			request.get_header_value("Sec-Fetch-Site"),
			request.get_header_value("X-Pgmq-Console-Token"),
			request.get_header_value("Content-Type")};
}

void Fail(httplib::Response &response, int status, const std::string &message, const std::string &sqlstate = "")
{
	json body{{"error", message}};
	if (!sqlstate.empty())
		body["sqlstate"] = sqlstate;
	response.status = status;
	response.set_content(body.dump(), "application/json");
}

// The error boundary of the HTTP layer: every route answers through it.
template <typename Fn>
void Answer(httplib::Response &response, Fn fn)
{
	try {
		response.set_content(fn().dump(), "application/json");
	} catch (const ApiError &e) {
		Fail(response, e.status(), e.what(), e.sqlstate());
	} catch (const std::exception &e) {
		std::fprintf(stderr, "pgmq-console: %s\n", e.what());
		Fail(response, 500, std::string("internal error: ") + e.what());
	}
}

}  // namespace

ConsoleServer::ConsoleServer(ConsoleApi &api, const RequestGuard &guard)
	: api_(api), guard_(guard), server_(kRequestDeadline, kSendTimeout)
{
	server_.new_task_queue = [] { return new httplib::ThreadPool(kThreads); };
	server_.set_payload_max_length(kMaxBody);
	// No script, style or frame but the console's own; no caching of figures.
	server_.set_default_headers({
		{"Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
									"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"},
		{"X-Content-Type-Options", "nosniff"},
		{"X-Frame-Options", "DENY"},
		{"Referrer-Policy", "no-referrer"},
		{"Cache-Control", "no-store"},
	});
	server_.set_pre_routing_handler([this](const httplib::Request &request, httplib::Response &response) {
		// A container's health check asks by 127.0.0.1 whatever the console
		// listens as; the answer holds nothing a foreign page could use.
		if (request.path == kHealthRoute)
			return httplib::Server::HandlerResponse::Unhandled;
		std::string refused = guard_.RefuseRead(Facts(request));
		if (refused.empty())
			return httplib::Server::HandlerResponse::Unhandled;
		Fail(response, 403, refused);
		return httplib::Server::HandlerResponse::Handled;
	});

	for (std::size_t i = 0; i < kAssetCount; ++i) {
		const Asset &asset = kAssets[i];
		server_.Get(asset.route, [&asset](const httplib::Request &, httplib::Response &response) {
			response.set_content(asset.content, asset.size, asset.type);
		});
	}

	server_.Get(kHealthRoute, [this](const httplib::Request &, httplib::Response &response) {
		bool healthy = api_.Healthy();
		response.status = healthy ? 200 : 503;
		response.set_content(json{{"status", healthy ? "ok" : "the database does not answer"}}.dump(),
							 "application/json");
	});
	server_.Get("/api/session", [this](const httplib::Request &, httplib::Response &response) {
		Answer(response, [&] { return api_.Session(); });
	});
	server_.Get("/api/overview", [this](const httplib::Request &, httplib::Response &response) {
		Answer(response, [&] { return api_.Overview(); });
	});
	server_.Get(kQueueRoute, [this](const httplib::Request &request, httplib::Response &response) {
		Answer(response, [&] { return api_.Queue(request.matches[1]); });
	});
	server_.Get(std::string(kQueueRoute) + "/messages", [this](const httplib::Request &request,
															  httplib::Response &response) {
		Answer(response, [&] {
			MessageQuery query;
			auto param = [&](const char *key, std::string &into) {
				if (request.has_param(key))
					into = request.get_param_value(key);
			};
			param("source", query.source);
			param("order", query.order);
			param("cursor", query.cursor);
			param("limit", query.limit);
			param("header", query.header);
			param("path", query.path);
			return api_.Messages(request.matches[1], query);
		});
	});
	server_.Post(std::string(kQueueRoute) + "/(purge|redrive_all|redrive|pause|resume|seek)",
				 [this](const httplib::Request &request, httplib::Response &response) {
					 Answer(response, [&] {
						 std::string refused = guard_.RefuseAction(Facts(request));
						 if (!refused.empty())
							 throw ApiError(403, refused);
						 return api_.Act(request.matches[1], request.matches[2], request.body);
					 });
				 });
	server_.set_error_handler([](const httplib::Request &, httplib::Response &response) {
		if (response.body.empty())
			Fail(response, response.status, response.status == 404 ? "not found" : "request refused");
	});
}

bool ConsoleServer::Bind(const std::string &host, int port) { return server_.bind_to_port(host, port); }

void ConsoleServer::Serve() { server_.listen_after_bind(); }

void ConsoleServer::Stop() { server_.StopServing(); }

}  // namespace pgmq::console
