// What a queue's alerts and badges say, on the overview and its page.
import { el } from './dom.js';

// What the alert names of /api/overview mean (docs/monitoring.md).
export const ALERTS = {
  oldest_visible: {
    short: 'messages wait too long',
    long: 'Messages wait too long: visible messages wait and the oldest message is older than 5 minutes.',
  },
  dead_letters: {
    short: 'dead letters waiting',
    long: 'Messages wait in its dead-letter queue: they reached their delivery limit, or a consumer set them aside.',
  },
  default_partition: {
    short: 'overran its partitions',
    long: 'The default partition is not empty: the queue overran its partitions and maintenance fails for it. Recover it with CALL pgmq.recover_partitioned_queue(…).',
  },
  runway: {
    short: 'runway under 10 min',
    long: 'At the current send rate its premade partitions run out within 10 minutes (or have run out).',
  },
  // A stream's consumer group (streams.js).
  stopped_reading: {
    short: 'stopped reading',
    long: 'A consumer group stopped reading: messages wait for it and it has not read for more than 10 minutes.',
  },
  holds_storage: {
    short: 'holds too much storage',
    long: 'A consumer group holds more than 10 GB of the stream: the partitions it has not passed are kept for it (until max_retention).',
  },
};

// A queue that other queues dead-letter into (its dead_letter_for).
export function isDeadLetterQueue(q) {
  return Array.isArray(q.dead_letter_for) && q.dead_letter_for.length > 0;
}

export function badges(q) {
  const out = [];
  if (q.paused) out.push(el('span', { class: 'badge badge-paused', 'data-badge': 'paused' }, 'paused'));
  if (q.stream) out.push(el('span', { class: 'badge badge-stream', 'data-badge': 'stream' }, 'stream'));
  if (q.partitioned) out.push(el('span', { class: 'badge badge-part', 'data-badge': 'partitioned' }, 'partitioned'));
  if (q.unlogged) out.push(el('span', { class: 'badge', 'data-badge': 'unlogged' }, 'unlogged'));
  if (isDeadLetterQueue(q)) {
    out.push(el('span', {
      class: 'badge badge-dead', 'data-badge': 'dead-letter-queue', title: `Dead-letter queue of ${q.dead_letter_for.join(', ')}`,
    }, 'dead-letter queue'));
  }
  return out;
}
