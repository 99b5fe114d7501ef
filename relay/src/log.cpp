// relay/src/log.cpp
#include "log.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

#include "pgmq/relay/one_line.hpp"

namespace pgmq::relay {
namespace {

std::mutex log_mutex;

void Write(const char *level, const std::string &message)
{
	auto now = std::chrono::system_clock::now();
	std::time_t seconds = std::chrono::system_clock::to_time_t(now);
	auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
	std::tm tm{};
	gmtime_r(&seconds, &tm);
	char stamp[32];
	std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
	std::string line = OneLine(message);  // one line per event, whatever libpq or the broker said
	std::lock_guard<std::mutex> lock(log_mutex);
	std::fprintf(stderr, "%s.%03dZ %s %s\n", stamp, static_cast<int>(millis), level, line.c_str());
	std::fflush(stderr);
}

}  // namespace

void LogInfo(const std::string &message) { Write("INFO", message); }
void LogWarning(const std::string &message) { Write("WARNING", message); }
void LogError(const std::string &message) { Write("ERROR", message); }

}  // namespace pgmq::relay
