// relay/include/pgmq/relay/batch_budget.hpp
// A batch is bounded in bytes as well as in count: rows are taken while they
// fit, the first one always (or a message larger than the limit would never
// be relayed); the rest of the read is made visible again for the next batch.
#pragma once

#include <cstdint>

namespace pgmq::relay {

class BatchBudget {
  public:
	explicit BatchBudget(std::int64_t max_bytes) : left_(max_bytes) {}

	// Whether a row of bytes is taken; once one is refused, all later are too,
	// so the batch stays a prefix of the read (msg_id order).
	bool Take(std::int64_t bytes)
	{
		if (full_ || (taken_ > 0 && bytes > left_)) {
			full_ = true;
			return false;
		}
		left_ -= bytes;
		taken_++;
		return true;
	}

  private:
	std::int64_t left_;
	std::int64_t taken_ = 0;
	bool full_ = false;
};

}  // namespace pgmq::relay
