// relay/include/pgmq/relay/backoff.hpp
// Capped exponential backoff for reconnects, with jitter so that relays that
// lost the same broker do not all come back in the same millisecond. The
// random fraction is passed in, so the arithmetic is testable.
#pragma once

namespace pgmq::relay {

class Backoff {
  public:
	Backoff(int initial_ms, int max_ms) : initial_ms_(initial_ms), max_ms_(max_ms) {}

	// The next delay: the cap of this attempt is initial * 2^attempts, at
	// most max; the delay is between half the cap and the cap ("equal
	// jitter"), random01 in [0, 1) picking where.
	int NextDelayMs(double random01);

	// After a success: the next failure starts from initial again.
	void Reset() { attempts_ = 0; }

	int attempts() const { return attempts_; }

  private:
	int initial_ms_;
	int max_ms_;
	int attempts_ = 0;
};

}  // namespace pgmq::relay
