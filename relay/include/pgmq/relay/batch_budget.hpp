// relay/include/pgmq/relay/batch_budget.hpp
// A batch is bounded in bytes as well as in count: rows are taken while they
// fit, the first one always (or a message larger than the limit would never
// be relayed); the rest of the read is made visible again for the next batch.
#pragma once

#include <cstddef>
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

// How many messages the next read of a stream's group asks for. A queue gets
// the rows beyond the byte limit back at once (set_vt 0); a group cannot, so
// they would stay leased for the visibility timeout (and an ordered group
// would read nothing meanwhile). After a read that went over the limit the
// next asks for as many as fitted, and the count doubles back to batch_size
// while reads fit.
class ReadSize {
  public:
	explicit ReadSize(int batch_size) : max_(batch_size), next_(batch_size) {}
	int next() const { return next_; }
	void After(std::size_t taken, std::size_t over_budget)
	{
		if (over_budget > 0)
			next_ = taken > 0 ? static_cast<int>(taken) : 1;
		else if (taken >= static_cast<std::size_t>(next_) && next_ < max_)
			next_ = next_ > max_ / 2 ? max_ : next_ * 2;
	}

  private:
	int max_;
	int next_;
};

}  // namespace pgmq::relay
