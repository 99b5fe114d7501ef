// relay/src/confirms.cpp
#include "pgmq/relay/confirms.hpp"

namespace pgmq::relay {

void ConfirmTracker::Start(std::uint64_t first_tag)
{
	first_tag_ = first_tag;
	answers_.clear();
	returned_.clear();
	index_by_id_.clear();
	pending_ = 0;
}

std::uint64_t ConfirmTracker::Published(const std::string &message_id)
{
	index_by_id_[message_id] = answers_.size();
	answers_.push_back(Answer_::None);
	returned_.push_back(false);
	pending_++;
	return first_tag_ + answers_.size() - 1;
}

void ConfirmTracker::Answer(std::uint64_t tag, bool multiple, bool ack)
{
	// multiple with tag 0 answers everything outstanding (AMQP 0-9-1).
	std::uint64_t last = (multiple && tag == 0) ? first_tag_ + answers_.size() - 1 : tag;
	std::uint64_t from = multiple ? first_tag_ : tag;
	for (std::uint64_t t = from; t <= last; t++) {
		if (t < first_tag_ || t - first_tag_ >= answers_.size())
			continue;  // not this batch's
		Answer_ &answer = answers_[t - first_tag_];
		if (answer != Answer_::None)
			continue;
		answer = ack ? Answer_::Ack : Answer_::Nack;
		pending_--;
	}
}

void ConfirmTracker::Returned(std::string_view message_id)
{
	auto it = index_by_id_.find(std::string(message_id));
	if (it != index_by_id_.end())
		returned_[it->second] = true;
}

Outcome ConfirmTracker::outcome(std::size_t index) const
{
	if (returned_.at(index))
		return Outcome::Returned;
	switch (answers_.at(index)) {
	case Answer_::Ack:
		return Outcome::Confirmed;
	case Answer_::Nack:
		return Outcome::Nacked;
	default:
		return Outcome::Pending;
	}
}

BatchOutcome Classify(const ConfirmTracker &tracker, std::size_t batch_size)
{
	BatchOutcome result;
	for (std::size_t i = 0; i < batch_size; i++) {
		Outcome outcome = i < tracker.size() ? tracker.outcome(i) : Outcome::Pending;
		if (outcome == Outcome::Confirmed) {
			result.confirmed.push_back(i);
			continue;
		}
		result.not_confirmed.push_back(i);
		result.returned += outcome == Outcome::Returned;
		result.nacked += outcome == Outcome::Nacked;
		result.unanswered += outcome == Outcome::Pending;
	}
	return result;
}

}  // namespace pgmq::relay
