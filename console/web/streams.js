// Streams (docs/streams.md): on the overview, one row per consumer group of
// every stream; on a stream's page, its groups, its partitions and, with
// actions allowed, seek. A group with an alert of docs/monitoring.md
// ("stopped reading", "holds too much storage") is highlighted and names it.
import { apiQueue } from './api_client.js';
import { clear, el, queueHref } from './dom.js';
import { fmtBytes, fmtDuration, fmtInt } from './format.js';
import { ALERTS } from './labels.js';
import { actionsOn, hasFeature, runAction, showStatus } from './shell.js';

// [key, header, cell(group, alerts)]: data-col, data-value and the text.
const GROUP_COLUMNS = [
  ['pending', 'Pending', (g) => [g.pending, fmtInt(g.pending)], 'Messages the group has not read yet: its lag'],
  ['in_flight', 'In flight', (g) => [g.in_flight, fmtInt(g.in_flight)], 'Read by a consumer of the group, not acknowledged yet'],
  ['oldest_pending', 'Oldest pending', (g) => [g.oldest_pending_age_sec, fmtDuration(g.oldest_pending_age_sec)],
    'How long the oldest message the group has not read has waited'],
  ['last_read', 'Last read', (g) => [g.last_read_age_sec, ago(g.last_read_age_sec)], 'When a consumer of the group last read'],
  ['last_ack', 'Last ack', (g) => [g.last_ack_age_sec, ago(g.last_ack_age_sec)], 'When the group last acknowledged a message'],
  ['held_bytes', 'Held', (g) => [g.held_bytes, fmtBytes(g.held_bytes)],
    'Storage of the stream kept for this group: partitions it has not passed'],
];

const ALERT_CELLS = { stopped_reading: ['pending', 'last_read'], holds_storage: ['held_bytes'] };

function ago(sec) {
  return sec === null || sec === undefined ? 'never' : `${fmtDuration(sec)} ago`;
}

function alertNames(alerts) {
  return alerts.map((a) => el('span', { class: 'alert-name', 'data-alert': a, title: ALERTS[a] ? ALERTS[a].long : a },
    ALERTS[a] ? ALERTS[a].short : a.replace(/_/g, ' ')));
}

function groupCells(g) {
  const alerts = g.alerts || [];
  const red = new Set(alerts.flatMap((a) => ALERT_CELLS[a] || []));
  return GROUP_COLUMNS.map(([key, , cell]) => {
    const [value, text] = cell(g);
    return el('td', {
      class: `num${red.has(key) ? ' cell-alert' : ''}`, 'data-col': key, 'data-value': value === null || value === undefined ? '' : value,
    }, text);
  });
}

function groupRow(streamName, g, withStream) {
  const alerts = g.alerts || [];
  return el('tr', {
    'data-stream': streamName, 'data-group': g.group_name, 'data-alerts': alerts.join(' '), class: alerts.length ? 'alert' : null,
  },
  withStream ? el('td', { 'data-col': 'stream', class: 'name' }, el('a', { href: queueHref(streamName) }, streamName)) : null,
  el('td', { 'data-col': 'group', class: withStream ? null : 'name' }, g.group_name, g.ordered ? ' ' : null,
    g.ordered ? el('span', { class: 'badge', 'data-badge': 'ordered' }, 'ordered') : null),
  groupCells(g),
  el('td', { 'data-col': 'alerts', class: 'alerts' }, alertNames(alerts)));
}

function headRow(first) {
  return el('tr', null, first.map((h) => el('th', { scope: 'col', 'data-col': h[0] }, h[1])),
    GROUP_COLUMNS.map(([key, label, , title]) => el('th', { scope: 'col', class: 'num', 'data-col': key, title }, label)),
    el('th', { scope: 'col', 'data-col': 'alerts' }, 'Alerts'));
}

// ------------------------------------------------------------ overview

// The overview's section, filled by renderStreams; hidden until a stream is
// there, and absent where the database's pgmq has no streams.
export function streamsSection() {
  if (!hasFeature('streams')) return null;
  return el('section', { id: 'streams-panel', class: 'panel', hidden: true },
    el('h2', null, 'Streams: consumer groups'),
    el('div', { class: 'table-wrap' },
      el('table', { id: 'streams', class: 'grid' },
        el('thead', null, headRow([['stream', 'Stream'], ['group', 'Group']])), el('tbody'))));
}

export function renderStreams(streams) {
  const panel = document.getElementById('streams-panel');
  if (!panel) return;
  const list = Array.isArray(streams) ? streams : [];
  panel.hidden = list.length === 0;
  const tbody = document.getElementById('streams').tBodies[0];
  const rows = [];
  for (const s of list) {
    if (!s.groups.length) {
      rows.push(el('tr', { 'data-stream': s.name, class: 'empty' },
        el('td', { 'data-col': 'stream', class: 'name' }, el('a', { href: queueHref(s.name) }, s.name)),
        el('td', { colspan: GROUP_COLUMNS.length + 2, class: 'muted' }, 'no consumer group')));
    }
    for (const g of s.groups) rows.push(groupRow(s.name, g, true));
  }
  tbody.replaceChildren(...rows);
}

// ------------------------------------------------------------ a stream's page

export function streamPanels() {
  return el('div', { id: 'stream-panels', hidden: true },
    el('section', { class: 'panel' }, el('h2', null, 'Consumer groups'),
      el('ul', { id: 'stream-alerts', class: 'alert-list', hidden: true }),
      el('div', { class: 'table-wrap' }, el('table', { id: 'stream-groups', class: 'grid' })),
      el('div', { id: 'seek-form', class: 'seek-form', hidden: true })),
    el('section', { class: 'panel' }, el('h2', null, 'Stream partitions'),
      el('div', { class: 'table-wrap' }, el('table', { id: 'stream-partitions', class: 'grid' }))));
}

const GROUP_OPTIONS = [
  ['ordered', 'Ordered', (v) => (v ? 'yes' : 'no')],
  ['dead_letter_queue', 'Dead-letter queue', (v) => el('a', { href: queueHref(v) }, v)],
  ['max_deliveries', 'Max deliveries', fmtInt],
  ['subscribed_at', 'Subscribed', (v) => timeText(v)],
];

// PostgreSQL's timestamptz text, to the second, in UTC as sent.
function timeText(v) {
  return el('span', { title: String(v) }, String(v).replace('T', ' ').replace(/\.\d+/, ''));
}

// info: /api/queues/NAME; after(): refresh once an action is done.
export function renderStream(name, info, after) {
  const box = document.getElementById('stream-panels');
  const s = info.stream;
  box.hidden = !s;
  if (!s) return;
  const groups = document.getElementById('stream-groups');
  const head = headRow([['group', 'Group']]);
  for (const [key, label] of GROUP_OPTIONS) head.append(el('th', { scope: 'col', 'data-col': key }, label));
  const body = el('tbody');
  for (const g of s.groups) {
    const tr = groupRow(name, g, false);
    for (const [key, , fmt] of GROUP_OPTIONS) {
      const v = g[key];
      tr.append(el('td', { 'data-col': key, 'data-value': v === null || v === undefined ? '' : String(v) },
        v === null || v === undefined ? '—' : fmt(v)));
    }
    body.append(tr);
  }
  if (!s.groups.length) {
    body.append(el('tr', { class: 'empty' }, el('td', { colspan: GROUP_COLUMNS.length + GROUP_OPTIONS.length + 2 },
      'No consumer group: pgmq.subscribe adds one.')));
  }
  groups.replaceChildren(el('thead', null, head), body);
  // The groups' alerts in full sentences, above the table.
  const list = document.getElementById('stream-alerts');
  list.replaceChildren(...s.groups.flatMap((g) => (g.alerts || []).map((a) => el('li', { 'data-group': g.group_name, 'data-alert': a },
    `${g.group_name}: ${ALERTS[a] ? ALERTS[a].long : a}`))));
  list.hidden = list.childElementCount === 0;
  renderStreamPartitions(s.partitions || []);
  renderSeek(name, s.groups, after);
}

function renderStreamPartitions(parts) {
  const table = document.getElementById('stream-partitions');
  // The role may read the stream but not its partitions: say so.
  if (!Array.isArray(parts)) {
    table.replaceChildren(el('caption', { 'data-error': parts.sqlstate || '' },
      `Partitions: not readable by this role (${parts.error}).`));
    return;
  }
  const cols = [
    ['partition_name', 'Partition', (v) => v, false],
    ['from_xid', 'From xid', (v) => v, true],
    ['to_xid', 'To xid', (v) => v, true],
    ['bytes', 'Size', fmtBytes, true],
    ['newest_at', 'Newest message', timeText, false],
  ];
  const body = el('tbody');
  for (const p of parts) {
    body.append(el('tr', { 'data-partition': p.partition_name, 'data-default': p.is_default ? 'true' : 'false' },
      cols.map(([k, , fmt, n]) => el('td', {
        'data-col': k, class: n ? 'num' : null, 'data-value': p[k] === null || p[k] === undefined ? '' : p[k],
      }, p[k] === null || p[k] === undefined ? '—' : fmt(p[k]), k === 'partition_name' && p.is_default ? ' (default)' : null))));
  }
  table.replaceChildren(el('thead', null, el('tr', null,
    cols.map(([, l, , n]) => el('th', { scope: 'col', class: n ? 'num' : null }, l)))), body);
}

// Seek: a group reads again every message sent at or after a time. Built
// once per group list, so that a refresh keeps what is being typed.
function renderSeek(name, groups, after) {
  const form = document.getElementById('seek-form');
  const names = groups.map((g) => g.group_name);
  form.hidden = !actionsOn() || names.length === 0;
  if (form.hidden || form.dataset.groups === JSON.stringify(names)) return;
  form.dataset.groups = JSON.stringify(names);
  clear(form);
  const select = el('select', { id: 'seek-group', 'aria-label': 'Consumer group' },
    names.map((n) => el('option', { value: n }, n)));
  const since = el('input', {
    id: 'seek-since', type: 'text', class: 'since', placeholder: '2026-12-06 09:00:00+00',
    'aria-label': 'Replay the messages sent at or after this time',
  });
  const btn = el('button', { id: 'action-seek', type: 'button', class: 'btn' }, 'Seek');
  btn.addEventListener('click', async () => {
    const group = select.value;
    const at = since.value.trim();
    if (!at) {
      showStatus('error', 'Seek: give the time to replay from, such as 2026-12-06 09:00:00+00.');
      return;
    }
    if (await runAction(
      `Seek group "${group}" of stream "${name}" to ${at}?\n\nThe group reads again every message sent at or after ` +
      `${at} that the stream still holds, then continues; its consumers' leases are dropped. Other groups are not affected.`,
      `${apiQueue(name)}/seek`, { group, since: at })) after();
  });
  form.append(el('span', { class: 'muted' }, 'Replay: '), select, ' from ', since, ' ', btn);
}
