// #/queue/<name>: one queue's alerts, figures, policies, partitions and
// actions, refreshed every 5 s, above its message browser.
import { ApiError, api, apiQueue, errorText } from './api_client.js';
import { append, clear, el, queueHref } from './dom.js';
import { fmtDuration, fmtInt, fmtRate, fmtTime, lastOf, quotedList } from './format.js';
import { ALERTS, badges, isDeadLetterQueue } from './labels.js';
import { browsePanel, loadMessages, renderTabs } from './message_browser.js';
import { REFRESH_MS, actionsOn, hasFeature, notAvailableText, runAction, setConn, showStatus, state } from './shell.js';
import { sparkline, sparkTitle } from './sparkline.js';
import { renderStream, streamPanels } from './streams.js';

const POLICY_ROWS = [
  ['dead_letter_queue', 'Dead-letter queue', (v) => v],
  ['max_deliveries', 'Max deliveries', (v) => fmtInt(v)],
  ['dead_lettered', 'Dead-lettered now', (v) => fmtInt(v)],
  ['retry_base_seconds', 'Retry backoff: base', (v) => `${v} s`],
  ['retry_max_seconds', 'Retry backoff: max', (v) => `${v} s`],
  ['deduplication_window', 'Deduplication window', (v) => v],
  ['retention_max_age', 'Retention: messages', (v) => v],
  ['retention_archive_max_age', 'Retention: archive', (v) => v],
  ['priority_levels', 'Priority levels', (v) => fmtInt(v)],
];

export function showQueue(view, gen, name) {
  const page = {
    name,
    info: null,
    source: 'queue',
    order: 'newest',
    header: '',
    path: '',
    limit: 50,
    cursors: [null], // cursor of each page seen; last = the current page
    nextCursor: null,
    latestLoad: 0, // the number of the last messages request (older answers are dropped)
  };

  append(view, [
    el('div', { class: 'crumbs' }, el('a', { href: '#/' }, 'Queues'), ' / ', el('span', null, name)),
    el('div', { class: 'page-head' },
      el('h1', { id: 'queue-name' }, name),
      el('span', { id: 'queue-badges' }),
      el('span', { class: 'spacer' }),
      el('div', { id: 'actions', class: 'actions' })),
    el('p', { id: 'queue-error', class: 'error-line', hidden: true }),
    el('ul', { id: 'queue-alerts', class: 'alert-list', hidden: true }),
    el('dl', { id: 'summary', class: 'summary' }),
    el('div', { class: 'two-col' },
      el('section', { id: 'policies-panel', class: 'panel' }, el('h2', null, 'Policies'),
        el('table', { id: 'policies', class: 'grid kv' }, el('tbody')),
        el('p', { id: 'policies-unset', class: 'muted small', hidden: true })),
      el('section', { id: 'partitions-panel', class: 'panel', hidden: true }, el('h2', null, 'Partitions'),
        el('div', { class: 'table-wrap' }, el('table', { id: 'partitions', class: 'grid' })))),
    streamPanels(),
    browsePanel(page, gen),
  ]);

  queueTick(page, gen, true);
}

// Loads the queue's figures, then again every 5 s. The first answer also
// builds the tabs and loads the first page of messages.
async function queueTick(page, gen, first) {
  window.clearTimeout(state.timer);
  let loaded = false;
  try {
    const info = await api(apiQueue(page.name));
    if (gen !== state.generation) return;
    page.info = info;
    renderQueueInfo(page, gen);
    document.getElementById('queue-error').hidden = true;
    setConn(`updated ${fmtTime(new Date().toISOString())}`, false);
    loaded = true;
  } catch (e) {
    if (gen !== state.generation) return;
    const line = document.getElementById('queue-error');
    line.textContent = e instanceof ApiError && e.status === 404
      ? `No queue "${page.name}", or this role may not read it.`
      : `Could not refresh: ${errorText(e)}`;
    line.hidden = false;
    setConn('not updating', true);
  }
  if (gen !== state.generation) return;
  if (first && loaded) {
    renderTabs(page);
    loadMessages(page, gen);
  }
  window.clearTimeout(state.timer);
  state.timer = window.setTimeout(() => queueTick(page, gen, first && !loaded), REFRESH_MS);
}

// After an action: show its effect now rather than at the next tick.
function refreshQueueSoon(page, gen) {
  queueTick(page, gen, false);
  loadMessages(page, gen);
}

function summaryItem(field, label, value, text, alert) {
  return el('div', { class: 'stat' },
    el('dt', null, label),
    el('dd', {
      'data-field': field,
      'data-value': value === null || value === undefined ? '' : value,
      class: alert ? 'cell-alert' : null,
    }, text === undefined ? fmtInt(value) : text));
}

function renderQueueInfo(page, gen) {
  const q = page.info.queue;
  const alerts = q.alerts || [];
  const has = (a) => alerts.includes(a);

  const b = document.getElementById('queue-badges');
  clear(b);
  append(b, badges(q));

  const list = document.getElementById('queue-alerts');
  clear(list);
  for (const a of alerts) {
    list.append(el('li', { 'data-alert': a }, ALERTS[a] ? ALERTS[a].long : a));
  }
  list.hidden = alerts.length === 0;

  const dl = document.getElementById('summary');
  clear(dl);
  // A stream's messages are not visible, leased or delayed: each consumer
  // group has its own figures (streams.js).
  const queueOnly = (item) => (q.stream ? null : item);
  append(dl, [
    queueOnly(summaryItem('visible', 'Visible', q.visible)),
    queueOnly(summaryItem('leased', 'Leased', q.leased)),
    queueOnly(summaryItem('delayed', 'Delayed', q.delayed)),
    summaryItem('total', q.stream ? 'Messages held' : 'Total', q.total),
    queueOnly(summaryItem('oldest', 'Oldest visible', q.oldest_visible_age_sec, fmtDuration(q.oldest_visible_age_sec), has('oldest_visible'))),
    summaryItem('send_rate', 'Sends/s', lastOf(q.send_rate), fmtRate(lastOf(q.send_rate))),
    summaryItem('read_rate', 'Reads/s', lastOf(q.read_rate), fmtRate(lastOf(q.read_rate))),
    q.dead_letter_queue !== null && q.dead_letter_queue !== undefined
      ? summaryItem('dead_lettered', 'Dead letters', q.dead_lettered, undefined, has('dead_letters'))
      : null,
    q.partitioned && !q.stream && hasFeature('partition_runway')
      ? summaryItem('runway_messages', 'Runway msgs', q.runway_messages, undefined, has('runway')) : null,
    q.partitioned && !q.stream && hasFeature('partition_runway')
      ? summaryItem('runway_seconds', 'Runway time', q.runway_seconds, fmtDuration(q.runway_seconds), has('runway')) : null,
    q.partitioned && hasFeature('default_partition_rows')
      ? summaryItem('default_rows', 'Default rows', q.default_partition_rows, undefined, has('default_partition')) : null,
  ]);
  // the two sparklines, larger, under the numbers
  const spark = el('div', { class: 'summary-sparks' },
    el('span', { class: 'muted' }, 'sends/s '),
    el('span', { title: sparkTitle(q.send_rate, 'sends/s') }, sparkline(q.send_rate, 'sends/s')),
    el('span', { class: 'muted' }, ' reads/s '),
    el('span', { title: sparkTitle(q.read_rate, 'reads/s') }, sparkline(q.read_rate, 'reads/s')));
  dl.append(el('div', { class: 'summary-wide' }, spark));

  renderPolicies(q, page.info.policies);
  renderPartitions(q, page.info.partitions || []);
  renderStream(q.name, page.info, () => refreshQueueSoon(page, gen));
  renderActions(page, gen);
}

function renderPolicies(q, p) {
  const tbody = document.getElementById('policies').tBodies[0];
  clear(tbody);
  // A stream's groups have their options (streams.js), not a queue's policies.
  document.getElementById('policies-panel').hidden = Boolean(q.stream);
  // A dead-letter queue names the queues whose dead letters it holds.
  if (isDeadLetterQueue(q)) {
    const links = [];
    for (const source of q.dead_letter_for) {
      if (links.length) links.push(', ');
      links.push(el('a', { href: queueHref(source) }, source));
    }
    tbody.append(el('tr', { 'data-policy': 'dead_letter_for' },
      el('th', { scope: 'row' }, 'Dead-letter queue of'),
      el('td', { 'data-value': q.dead_letter_for.join(',') }, links)));
  }
  const line = document.getElementById('policies-unset');
  // Upstream pgmq has no delivery policies: say so instead of "not set".
  if (!hasFeature('dead_letter_policies')) {
    line.textContent = `Dead-letter queue, retries, deduplication, retention and priorities: ${notAvailableText()}.`;
    line.dataset.na = 'policies';
    line.hidden = false;
    return;
  }
  delete line.dataset.na;
  const unset = [];
  for (const [key, label, fmt] of POLICY_ROWS) {
    const v = p ? p[key] : null;
    if (v === null || v === undefined) {
      if (key !== 'dead_lettered') unset.push(label.toLowerCase());
      continue;
    }
    const value = key === 'dead_letter_queue' ? el('a', { href: queueHref(v) }, v) : fmt(v);
    tbody.append(el('tr', { 'data-policy': key },
      el('th', { scope: 'row' }, label),
      el('td', { 'data-value': v }, value)));
  }
  line.textContent = unset.length ? `Not set: ${unset.join(', ')}.` : '';
  line.hidden = unset.length === 0;
}

function renderPartitions(q, parts) {
  const panel = document.getElementById('partitions-panel');
  const table = document.getElementById('partitions');
  clear(table);
  // A partitioned queue of upstream pgmq: no pgmq.partition_status to ask.
  if (q.partitioned && !hasFeature('partition_runway')) {
    panel.hidden = false;
    table.append(el('caption', { 'data-na': 'partition_runway' }, `Partition runway: ${notAvailableText()}.`));
    return;
  }
  panel.hidden = parts.length === 0;
  if (parts.length === 0) return;
  const cols = [
    ['parent_table', 'Table', (v) => v, false],
    ['partition_column', 'By', (v) => v, false],
    ['partition_interval', 'Interval', (v) => v, true],
    ['premake', 'Premake', fmtInt, true],
    ['current_position', 'Current', (v) => v, true],
    ['premade_until', 'Premade until', (v) => v, true],
    ['runway_messages', 'Runway msgs', fmtInt, true],
    ['runway_seconds', 'Runway time', fmtDuration, true],
    ['default_partition_rows', 'Default rows', fmtInt, true],
  ];
  table.append(el('thead', null, el('tr', null, cols.map(([, l, , n]) => el('th', { class: n ? 'num' : null, scope: 'col' }, l)))));
  const tbody = el('tbody');
  for (const p of parts) {
    tbody.append(el('tr', { 'data-parent': p.parent_table, class: p.default_partition_rows > 0 ? 'alert' : null },
      cols.map(([k, , fmt, n]) => el('td', {
        'data-col': k,
        class: n ? 'num' : null,
        'data-value': p[k] === null || p[k] === undefined ? '' : p[k],
      }, p[k] === null || p[k] === undefined ? '—' : fmt(p[k])))));
  }
  table.append(tbody);
}

function renderActions(page, gen) {
  const box = document.getElementById('actions');
  clear(box);
  if (!actionsOn()) {
    box.hidden = true;
    return;
  }
  const q = page.info.queue;
  box.hidden = false;
  const name = q.name;
  const after = () => refreshQueueSoon(page, gen);

  if (q.dead_letter_queue) {
    const qty = el('input', {
      id: 'redrive-qty', type: 'number', min: 1, step: 1, placeholder: 'all',
      class: 'qty', 'aria-label': 'How many dead letters to redrive (empty: all)',
    });
    const btn = el('button', { id: 'action-redrive', type: 'button', class: 'btn' }, 'Redrive');
    btn.addEventListener('click', async () => {
      const raw = qty.value.trim();
      const n = raw === '' ? null : Number(raw);
      if (n !== null && !(Number.isInteger(n) && n > 0)) {
        showStatus('error', 'Redrive: the quantity must be a whole number above 0, or empty for all.');
        return;
      }
      const waiting = q.dead_lettered === null || q.dead_lettered === undefined ? 'the' : fmtInt(q.dead_lettered);
      const moves = `dead-lettered messages of "${name}" from "${q.dead_letter_queue}" back to "${name}"`;
      const order = `in the order they had in "${name}"`;
      const what = n === null
        ? `all ${waiting} ${moves}, ${order}`
        : `up to ${fmtInt(n)} ${moves}: the first ${fmtInt(n)} ${order}`;
      if (await runAction(`Redrive queue "${name}"?\n\nMoves ${what}, visible at once.`,
        `${apiQueue(name)}/redrive`, { qty: n })) after();
    });
    box.append(el('span', { class: 'action-group' }, btn, qty));
  }

  if (isDeadLetterQueue(q)) {
    const btn = el('button', {
      id: 'action-redrive-all', type: 'button', class: 'btn', title: 'Send every dead letter back to the queue it came from',
    }, 'Redrive all');
    btn.addEventListener('click', async () => {
      if (await runAction(
        `Redrive every dead letter in "${name}"?\n\nMoves each message of "${name}" back to the queue it was dead-lettered from ` +
        `(it is the dead-letter queue of ${quotedList(q.dead_letter_for)}), in the order they had there, visible at once. ` +
        `Messages sent to "${name}" directly, or from a queue that no longer exists, stay.`,
        `${apiQueue(name)}/redrive_all`, {})) after();
    });
    box.append(btn);
  }

  if (!hasFeature('pause')) {
    // No pause in upstream pgmq: no button.
  } else if (q.paused) {
    const btn = el('button', { id: 'action-resume', type: 'button', class: 'btn' }, 'Resume');
    btn.addEventListener('click', async () => {
      if (await runAction(`Resume ${q.stream ? 'stream' : 'queue'} "${name}"?\n\nReaders receive its messages again.`,
        `${apiQueue(name)}/resume`, {})) after();
    });
    box.append(btn);
  } else {
    const btn = el('button', { id: 'action-pause', type: 'button', class: 'btn' }, 'Pause');
    btn.addEventListener('click', async () => {
      const what = q.stream ? 'stream' : 'queue';
      const reads = q.stream ? 'every consumer group\'s read' : 'every read';
      if (await runAction(`Pause ${what} "${name}"?\n\nSends are still accepted; ${reads} returns nothing until it is resumed.`,
        `${apiQueue(name)}/pause`, {})) after();
    });
    box.append(btn);
  }

  // A stream: pause and resume (read_stream honours a pause), seek under its
  // groups (streams.js), and no purge, which would take every group's
  // messages from under its leases.
  if (q.stream) return;
  const purge = el('button', { id: 'action-purge', type: 'button', class: 'btn btn-danger' }, 'Purge');
  purge.addEventListener('click', async () => {
    if (await runAction(
      `Purge queue "${name}"?\n\nDeletes all ${fmtInt(q.total)} messages in it now, visible, leased and delayed. The archive is kept. This cannot be undone.`,
      `${apiQueue(name)}/purge`, {})) after();
  });
  box.append(purge);
}
