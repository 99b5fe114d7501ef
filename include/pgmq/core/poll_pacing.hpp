// include/pgmq/core/poll_pacing.hpp
// When a *_with_poll waiter reads again. It reads at once, then after each
// poll interval, and at once when a committed send to its queue wakes it. But
// after a wake-up whose read found nothing (the send was for someone else: its
// conditional filter did not match, or another consumer claimed the message),
// it reads no earlier than one poll interval after that read, and keeps that
// pace while such wake-ups continue: a stream of sends a waiter cannot use
// costs it at most one read per interval, not one per send. A quiet interval
// (no wake-up) ends the holding off.
#pragma once

#include <cstdint>

#include "pgmq/core/arguments.hpp"

namespace pgmq::core {

struct PollPacer {
	PollSchedule schedule;
	int64_t last_read_us = 0;
	bool woken = false;    // woken since the last read
	bool holding = false;  // the last read followed a wake-up and found nothing
};

// After a read that claimed nothing, finished at now_us.
void AfterEmptyRead(PollPacer &pacer, int64_t now_us) noexcept;

// The waiter's latch was set (a committed send, or any other reason).
inline void NoteWoken(PollPacer &pacer) noexcept { pacer.woken = true; }

// What to do at now_us: -1 give up (the last read was at or after the
// deadline), 0 read now, n > 0 wait up to n ms (then NoteWoken if woken, and
// ask again).
long NextPollStep(const PollPacer &pacer, int64_t now_us) noexcept;

}  // namespace pgmq::core

#include "pgmq/core/no_postgres.hpp"
