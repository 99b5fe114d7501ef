// relay/src/backoff.cpp
#include "pgmq/relay/backoff.hpp"

#include <algorithm>

namespace pgmq::relay {

int Backoff::NextDelayMs(double random01)
{
	long long cap = initial_ms_;
	for (int i = 0; i < attempts_ && cap < max_ms_; i++)
		cap *= 2;
	cap = std::min<long long>(cap, max_ms_);
	if (attempts_ < 1000)  // stays small; the cap is reached long before
		attempts_++;
	random01 = std::clamp(random01, 0.0, 1.0);
	long long half = cap / 2;
	return static_cast<int>(half + static_cast<long long>((cap - half) * random01));
}

}  // namespace pgmq::relay
