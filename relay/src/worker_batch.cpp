// relay/src/worker_batch.cpp
// One batch: publish, confirms, and what becomes of each message. A refusal
// costs the refused message only: the header rules refuse before
// publishing, and when the broker closes the channel on a batch, the rest is
// published one message at a time so the refused one is found and set aside.
#include "log.hpp"
#include "pgmq/relay/refusal.hpp"
#include "worker.hpp"

namespace pgmq::relay {
namespace {

using Clock = std::chrono::steady_clock;

std::string Count(std::size_t n, const char *what) { return std::to_string(n) + " " + what; }

}  // namespace

void Worker::RelayBatch(const std::vector<QueueMessage> &messages)
{
	counters_.read += messages.size();
	Batch batch{messages, {}, std::vector<Fate>(messages.size(), Fate::Pending),
				std::vector<std::string>(messages.size()), Clock::now()};
	batch.outgoing.reserve(messages.size());
	std::vector<std::size_t> to_publish;
	for (std::size_t i = 0; i < messages.size(); i++) {
		batch.outgoing.push_back(PrepareMessage(queue_, messages[i]));
		const Outgoing &out = batch.outgoing.back();
		if (!out.warning.empty())
			LogWarning(Prefix() + "message " + out.message_id + ": " + out.warning);
		if (out.refusal.empty()) {
			to_publish.push_back(i);
		} else {
			batch.fate[i] = Fate::Refused;
			batch.refusal[i] = out.refusal;
		}
	}
	std::optional<AmqpError> failure;
	if (!to_publish.empty())
		failure = Publish(batch, to_publish);
	if (failure && failure->kind() == AmqpError::Kind::ChannelClosed && MayBeOneMessage(failure->reply_code())) {
		DropBroker(std::string(failure->what()) + " (reply code " + std::to_string(failure->reply_code()) +
				   "); publishing the rest of the batch one message at a time");
		failure = PublishOneByOne(batch);
	}
	Settle(batch, failure);
}

std::optional<AmqpError> Worker::Publish(Batch &batch, const std::vector<std::size_t> &indexes)
{
	std::vector<Publication> publications;
	publications.reserve(indexes.size());
	for (std::size_t i : indexes)
		publications.push_back({&batch.outgoing[i], &batch.messages[i]});
	std::optional<AmqpError> failure;
	counters_.confirms_pending = static_cast<std::int64_t>(indexes.size());
	try {
		broker_->PublishAndConfirm(queue_.exchange, publications, tracker_,
								   Clock::now() + std::chrono::milliseconds(config_.broker.confirm_timeout_ms));
	} catch (const AmqpError &e) {
		failure = e;
	}
	counters_.confirms_pending = 0;
	counters_.published += tracker_.size();
	counters_.broker_blocked = broker_->blocked();
	for (std::size_t k = 0; k < indexes.size(); k++) {
		Outcome outcome = k < tracker_.size() ? tracker_.outcome(k) : Outcome::Pending;
		batch.fate[indexes[k]] = outcome == Outcome::Confirmed ? Fate::Confirmed
								 : outcome == Outcome::Returned ? Fate::Returned
								 : outcome == Outcome::Nacked	? Fate::Nacked
																: Fate::Pending;
	}
	return failure;
}

std::optional<AmqpError> Worker::PublishOneByOne(Batch &batch)
{
	const auto confirm_timeout = std::chrono::milliseconds(config_.broker.confirm_timeout_ms);
	const auto invisible_until = batch.read_at + std::chrono::seconds(config_.visibility_timeout_s);
	for (std::size_t i = 0; i < batch.messages.size(); i++) {
		if (batch.fate[i] != Fate::Pending)
			continue;
		// Never publish past the visibility timeout: the message could then
		// be read (and published) by another relay at the same time.
		if (Clock::now() + confirm_timeout >= invisible_until)
			return AmqpError(AmqpError::Kind::Timeout, "the visibility timeout ends before the batch could be "
													   "published one message at a time");
		if (!EnsureBroker(false))
			return AmqpError(AmqpError::Kind::Failed, "no broker to publish the rest of the batch to");
		std::optional<AmqpError> failure = Publish(batch, {i});
		if (!failure) {
			if (batch.fate[i] == Fate::Nacked)
				return AmqpError(AmqpError::Kind::Failed, "the broker nacked a message published alone");
			continue;
		}
		if (failure->kind() == AmqpError::Kind::ChannelClosed &&
			RefusedForItself(failure->reply_code(), batch.outgoing[i].chose_routing_key)) {
			batch.fate[i] = Fate::Refused;
			batch.refusal[i] = std::string(failure->what()) + " (reply code " + std::to_string(failure->reply_code()) + ")";
			DropBroker("");  // the channel is closed; the next message gets a fresh one
			continue;
		}
		return failure;
	}
	return std::nullopt;
}

void Worker::Settle(Batch &batch, const std::optional<AmqpError> &failure)
{
	std::vector<std::int64_t> confirmed, unanswered;
	std::size_t returned = 0, nacked = 0;
	for (std::size_t i = 0; i < batch.messages.size(); i++) {
		switch (batch.fate[i]) {
		case Fate::Confirmed:
			confirmed.push_back(batch.messages[i].msg_id);
			break;
		case Fate::Returned:
			returned++;
			break;
		case Fate::Nacked:
			nacked++;
			unanswered.push_back(batch.messages[i].msg_id);
			break;
		case Fate::Pending:
			unanswered.push_back(batch.messages[i].msg_id);
			break;
		case Fate::Refused:
			break;
		}
	}
	counters_.confirmed += confirmed.size();
	counters_.returned += returned;
	counters_.nacked += nacked;
	counters_.unconfirmed += unanswered.size() - nacked;
	if (returned)
		LogWarning(Prefix() + Count(returned, "message(s) unroutable") + " (basic.return from exchange \"" +
				   queue_.exchange + "\"): left in the queue, retried after the visibility timeout");

	// Only now, and only the confirmed ones. If this fails they are published
	// again later, with the same message-id: the one kind of duplicate.
	if (!confirmed.empty() && pg_) {
		try {
			counters_.relayed += queue_.is_stream()
									 ? pg_->Acknowledge(queue_.name, queue_.group, confirmed)
									 : pg_->Remove(queue_.name, confirmed, queue_.after_confirm == AfterConfirm::Archive);
		} catch (const PgError &e) {
			DropPostgres(e.what() + std::string(" (") + Count(confirmed.size(), "confirmed message(s)") +
							 (queue_.is_stream() ? " stay with the group" : " stay in the queue") +
							 " and will be published again with the same message-id)",
						 e.connection_lost());
		}
	}
	SetAside(batch);

	// A nack is a broken channel, not a verdict on the message: in a cluster a
	// channel opened during a leader election nacks everything while a fresh
	// one is acked. So nacks, like a lost connection or a timeout, make the
	// messages visible again at once and the relay reconnects, with backoff.
	if (!failure && nacked == 0) {
		broker_backoff_.Reset();
		return;
	}
	std::string why = failure ? failure->what() : Count(nacked, "message(s) nacked by the broker");
	if (failure && failure->kind() == AmqpError::Kind::Timeout)
		counters_.timeouts++;
	DropBroker(why);
	if (pg_ && !unanswered.empty()) {
		try {
			Release(unanswered);
		} catch (const PgError &e) {
			DropPostgres(e.what(), e.connection_lost());
		}
	}
	// Backoff also when the connect works and the publish fails (an
	// exchange that does not exist closes the channel every time).
	Wait(broker_backoff_, "publish failed",
		 Count(unanswered.size(), queue_.is_stream() ? "message(s) delivered again when their lease runs out; reconnecting"
													: "message(s) made visible again; reconnecting"));
}

void Worker::SetAside(Batch &batch)
{
	for (std::size_t i = 0; i < batch.messages.size(); i++) {
		if (batch.fate[i] != Fate::Refused)
			continue;
		const QueueMessage &message = batch.messages[i];
		const std::string &id = batch.outgoing[i].message_id;
		counters_.refused++;
		if (dead_letter_queue_.empty() || !pg_) {
			LogWarning(Prefix() + "message " + id + " refused: " + batch.refusal[i] +
					   (dead_letter_queue_.empty() ? "; no dead_letter_queue: left in the queue"
												   : "; left in the queue (no PostgreSQL connection)"));
			continue;
		}
		try {
			if (pg_->MoveToDeadLetters(queue_.name, queue_.group, message.msg_id, dead_letter_queue_, message.body,
									   DeadLetterHeaders(queue_.name, message, batch.refusal[i], queue_.group)))
				counters_.dead_lettered++;
			LogWarning(Prefix() + "message " + id + " refused: " + batch.refusal[i] + "; moved to dead-letter queue \"" +
					   dead_letter_queue_ + "\"");
		} catch (const PgError &e) {
			if (e.missing_queue())
				Missing(e);
			DropPostgres(e.what(), e.connection_lost());
		}
	}
}

}  // namespace pgmq::relay
