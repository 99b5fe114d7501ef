// relay/include/pgmq/relay/confirms.hpp
// The broker's answers to one published batch, as publisher confirms give
// them: basic.ack / basic.nack by delivery tag (possibly "multiple": every tag
// up to this one), and basic.return, which names no tag, only the message
// (our message-id) and comes before that message's ack. A message counts as
// confirmed only when it was acked and not returned: with the mandatory flag
// an unroutable message is acked too, but it reached no queue.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace pgmq::relay {

enum class Outcome { Pending, Confirmed, Nacked, Returned };

class ConfirmTracker {
  public:
	// Forget the previous batch; the next Published gets first_tag.
	void Start(std::uint64_t first_tag);
	// Records the next publish (delivery tag first_tag + count so far).
	std::uint64_t Published(const std::string &message_id);

	void Ack(std::uint64_t tag, bool multiple) { Answer(tag, multiple, true); }
	void Nack(std::uint64_t tag, bool multiple) { Answer(tag, multiple, false); }
	// A basic.return for message_id (unknown ids are ignored).
	void Returned(std::string_view message_id);

	// Every publish of the batch has its ack or nack.
	bool Done() const { return pending_ == 0; }
	std::size_t pending() const { return pending_; }
	std::size_t size() const { return answers_.size(); }
	// The outcome of the i-th publish of the batch.
	Outcome outcome(std::size_t index) const;

  private:
	enum class Answer_ : unsigned char { None, Ack, Nack };
	void Answer(std::uint64_t tag, bool multiple, bool ack);

	std::uint64_t first_tag_ = 1;
	std::vector<Answer_> answers_;
	std::vector<bool> returned_;
	std::unordered_map<std::string, std::size_t> index_by_id_;
	std::size_t pending_ = 0;
};

// What becomes of a batch of batch_size messages of which the tracker saw
// the first tracker.size() published (a failure can stop publishing early).
struct BatchOutcome {
	std::vector<std::size_t> confirmed;      // indexes to delete or archive
	std::vector<std::size_t> not_confirmed;  // indexes that stay in the queue
	std::size_t returned = 0;
	std::size_t nacked = 0;
	std::size_t unanswered = 0;  // never published, or no answer in time
};

BatchOutcome Classify(const ConfirmTracker &tracker, std::size_t batch_size);

}  // namespace pgmq::relay
