// console/src/sampler.cpp
#include "sampler.hpp"

#include <chrono>
#include <cstdio>
#include <memory>

#include "database.hpp"
#include "pgmq/console/queries.hpp"

namespace pgmq::console {

Sampler::Sampler(std::string conninfo, std::string password, int sample_seconds, RateHistory &history)
	: conninfo_(std::move(conninfo)), password_(std::move(password)), sample_seconds_(sample_seconds),
	  history_(history), thread_([this] { Run(); })
{
}

Sampler::~Sampler()
{
	{
		std::lock_guard<std::mutex> lock(mutex_);
		stopping_ = true;
	}
	wake_.notify_all();
	thread_.join();
}

void Sampler::Run()
{
	using Clock = std::chrono::steady_clock;
	const auto start = Clock::now();
	std::unique_ptr<Session> session;
	std::string last_error;
	for (auto next = Clock::now();; next += std::chrono::seconds(sample_seconds_)) {
		{
			std::unique_lock<std::mutex> lock(mutex_);
			if (wake_.wait_until(lock, next, [this] { return stopping_; }))
				return;
		}
		try {
			if (!session || !session->healthy())
				session = std::make_unique<Session>(conninfo_, password_, /*read_only=*/true);
			std::vector<CounterSample> samples;
			for (const Row &row : session->Exec(kCountersSql))
				samples.push_back({row.at(0).value_or(""), static_cast<std::uint32_t>(std::stoul(row.at(1).value_or("0"))),
								   std::stoll(row.at(2).value_or("0")), std::stoll(row.at(3).value_or("0"))});
			history_.Record(std::chrono::duration<double>(Clock::now() - start).count(), samples);
			last_error.clear();
		} catch (const std::exception &e) {
			// Once per kind of failure, not every few seconds.
			if (last_error != e.what())
				std::fprintf(stderr, "pgmq-console: sampling the rates failed: %s\n", e.what());
			last_error = e.what();
			session.reset();
		}
		if (Clock::now() > next + std::chrono::seconds(sample_seconds_))
			next = Clock::now();  // fell behind: no burst of catch-up samples
	}
}

}  // namespace pgmq::console
