// #/: one row per queue, its figures and alerts, refreshed every 5 s.
import { api, errorText } from './api_client.js';
import { append, el, queueHref } from './dom.js';
import { fmtDuration, fmtInt, fmtRate, fmtTime, lastOf } from './format.js';
import { ALERTS, badges } from './labels.js';
import { REFRESH_MS, hasFeature, missingFeatures, notAvailableText, setConn, state } from './shell.js';
import { sparkline, sparkTitle } from './sparkline.js';
import { renderStreams, streamsSection } from './streams.js';

// key: data-col and sort key; num: numeric column (first click sorts descending)
const COLUMNS = [
  { key: 'name', label: 'Queue', num: false, value: (q) => q.name.toLowerCase() },
  { key: 'visible', label: 'Visible', num: true, value: (q) => q.visible, title: 'Ready to read (vt passed)' },
  { key: 'leased', label: 'Leased', num: true, value: (q) => q.leased, title: 'Read by a consumer, lease not over' },
  { key: 'delayed', label: 'Delayed', num: true, value: (q) => q.delayed, title: 'Sent with a delay, not yet visible' },
  { key: 'total', label: 'Total', num: true, value: (q) => q.total, title: 'Messages in the queue table' },
  { key: 'oldest', label: 'Oldest visible', num: true, value: (q) => q.oldest_visible_age_sec, title: 'Age of the oldest visible message' },
  { key: 'send_rate', label: 'Sends/s', num: true, value: (q) => lastOf(q.send_rate), title: 'Send rate over the last hour (last sample shown)' },
  { key: 'read_rate', label: 'Reads/s', num: true, value: (q) => lastOf(q.read_rate), title: 'Read rate over the last hour (last sample shown)' },
  { key: 'dead_lettered', label: 'Dead letters', num: true, value: (q) => q.dead_lettered, title: 'Messages of this queue waiting in its dead-letter queue', needs: 'dead_letter_policies' },
  { key: 'runway_messages', label: 'Runway msgs', num: true, value: (q) => q.runway_messages, title: 'Partitioned: messages that still fit in premade partitions', needs: 'partition_runway' },
  { key: 'runway_seconds', label: 'Runway time', num: true, value: (q) => q.runway_seconds, title: 'Partitioned: how long the runway lasts at the current send rate', needs: 'partition_runway' },
  { key: 'default_rows', label: 'Default rows', num: true, value: (q) => q.default_partition_rows, title: 'Partitioned: rows in the default partitions (should be 0)', needs: 'default_partition_rows' },
  { key: 'alerts', label: 'Alerts', num: true, value: (q) => (q.alerts || []).length },
];

// The columns the database's pgmq has figures for: the others are left out
// and named in the notice above the table.
function columns() {
  return COLUMNS.filter((c) => !c.needs || hasFeature(c.needs));
}

const overview = {
  sort: loadSort(),
  data: null, // the last answer, re-sorted when a header is clicked
  rows: new Map(), // queue name -> { signature, tr } of the rows on the page
};

function loadSort() {
  try {
    const s = JSON.parse(window.localStorage.getItem('pgmq-console-sort') || 'null');
    if (s && typeof s.key === 'string' && (s.dir === 'asc' || s.dir === 'desc')) return s;
  } catch (e) {
    /* storage unavailable: default order */
  }
  return { key: 'name', dir: 'asc' };
}

function saveSort() {
  try {
    window.localStorage.setItem('pgmq-console-sort', JSON.stringify(overview.sort));
  } catch (e) {
    /* not kept across reloads then */
  }
}

function sortedQueues(queues) {
  const col = columns().find((c) => c.key === overview.sort.key) || COLUMNS[0];
  const sign = overview.sort.dir === 'asc' ? 1 : -1;
  return queues.slice().sort((a, b) => {
    const va = col.value(a);
    const vb = col.value(b);
    const na = va === null || va === undefined;
    const nb = vb === null || vb === undefined;
    if (na !== nb) return na ? 1 : -1; // no value: always last
    if (!na && va !== vb) return va < vb ? -sign : sign;
    return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  });
}

function renderShell(view) {
  overview.rows = new Map();
  const head = el('tr');
  for (const c of columns()) {
    const btn = el('button', { type: 'button', class: 'sort', 'data-sort': c.key, title: c.title || null }, c.label);
    btn.addEventListener('click', () => {
      if (overview.sort.key === c.key) overview.sort.dir = overview.sort.dir === 'asc' ? 'desc' : 'asc';
      else overview.sort = { key: c.key, dir: c.num ? 'desc' : 'asc' };
      saveSort();
      if (overview.data) renderRows(overview.data);
    });
    head.append(el('th', { 'data-col': c.key, class: c.num ? 'num' : null, scope: 'col' }, btn));
  }
  append(view, [
    el('div', { class: 'page-head' },
      el('h1', null, 'Queues'),
      el('span', { id: 'overview-summary', class: 'muted' })),
    notAvailableNotice(),
    el('p', { id: 'hidden-queues', class: 'notice', hidden: true }),
    el('div', { id: 'refused-queues', class: 'notice', hidden: true }),
    el('p', { id: 'overview-error', class: 'error-line', hidden: true }),
    el('div', { class: 'table-wrap' },
      el('table', { id: 'overview', class: 'grid' }, el('thead', null, head), el('tbody'))),
    el('p', { class: 'legend muted' },
      'Rows with an alert are highlighted and name it (alert queries of docs/monitoring.md). ',
      'Click a column header to sort; click again to reverse. Refreshed every 5 s.'),
    streamsSection(),
  ]);
}

// What needs pgmq-cpp, named once above the table rather than as empty
// columns (docs/managed-databases.md).
function notAvailableNotice() {
  const missing = missingFeatures();
  if (!missing.length) return null;
  const text = notAvailableText();
  // pgmq-cpp before streams lacks only what came later.
  const cpp = Boolean(state.session && state.session.pgmq && state.session.pgmq.pgmq_cpp);
  return el('p', { id: 'not-available', class: 'notice muted' },
    `${text[0].toUpperCase()}${text.slice(1)} (they need ${cpp ? 'a newer ' : ''}pgmq-cpp): ${missing.join(', ')}.`);
}

function numCell(key, value, text, extraClass) {
  return el('td', {
    class: `num${extraClass ? ` ${extraClass}` : ''}`,
    'data-col': key,
    'data-value': value === null || value === undefined ? '' : value,
  }, text === undefined ? fmtInt(value) : text);
}

function rateCell(key, series, label) {
  const last = lastOf(series);
  return el('td', {
    class: 'num rate', 'data-col': key, 'data-value': last === null ? '' : last, title: sparkTitle(series, label),
  }, sparkline(series, label), el('span', { class: 'rate-value' }, last === null ? '—' : fmtRate(last)));
}

function queueRow(q) {
  const alerts = q.alerts || [];
  const has = (a) => alerts.includes(a);
  const tr = el('tr', {
    'data-queue': q.name,
    'data-alerts': alerts.join(' '),
    'data-paused': q.paused ? 'true' : 'false',
    class: [alerts.length ? 'alert' : '', q.paused ? 'paused' : ''].join(' ').trim() || null,
  });
  // Through dom.js's append: the cells of features the database lacks are null.
  append(tr, [
    el('td', { 'data-col': 'name', class: 'name' },
      el('a', { href: queueHref(q.name) }, q.name), ' ', badges(q)),
    numCell('visible', q.visible),
    numCell('leased', q.leased),
    numCell('delayed', q.delayed),
    numCell('total', q.total),
    numCell('oldest', q.oldest_visible_age_sec, fmtDuration(q.oldest_visible_age_sec),
      has('oldest_visible') ? 'cell-alert' : null),
    rateCell('send_rate', q.send_rate, 'sends/s'),
    rateCell('read_rate', q.read_rate, 'reads/s'),
    hasFeature('dead_letter_policies')
      ? numCell('dead_lettered', q.dead_lettered, undefined, has('dead_letters') ? 'cell-alert' : null) : null,
    hasFeature('partition_runway')
      ? numCell('runway_messages', q.runway_messages, undefined, has('runway') ? 'cell-alert' : null) : null,
    hasFeature('partition_runway')
      ? numCell('runway_seconds', q.runway_seconds, fmtDuration(q.runway_seconds), has('runway') ? 'cell-alert' : null) : null,
    hasFeature('default_partition_rows')
      ? numCell('default_rows', q.default_partition_rows, undefined, has('default_partition') ? 'cell-alert' : null) : null,
    el('td', { 'data-col': 'alerts', class: 'alerts' },
      alerts.map((a) => el('span', {
        class: 'alert-name',
        'data-alert': a,
        title: ALERTS[a] ? ALERTS[a].long : a,
      }, ALERTS[a] ? ALERTS[a].short : a.replace(/_/g, ' ')))),
  ]);
  return tr;
}

function renderRows(data) {
  const table = document.getElementById('overview');
  if (!table) return;
  for (const th of table.querySelectorAll('thead th')) {
    const key = th.dataset.col;
    if (key === overview.sort.key) th.setAttribute('aria-sort', overview.sort.dir === 'asc' ? 'ascending' : 'descending');
    else th.removeAttribute('aria-sort');
  }
  table.dataset.sort = `${overview.sort.key} ${overview.sort.dir}`;
  table.dataset.generatedAt = data.generated_at || '';
  const tbody = table.tBodies[0];
  const queues = sortedQueues(data.queues || []);
  // A row is rebuilt only when its queue's figures changed: the rows of
  // idle queues, most of a large overview, are kept and only moved.
  const rows = new Map();
  const fragment = document.createDocumentFragment();
  if (queues.length === 0) {
    fragment.append(el('tr', { class: 'empty' }, el('td', { colspan: columns().length }, 'No queues.')));
  }
  for (const q of queues) {
    const signature = JSON.stringify(q);
    const kept = overview.rows.get(q.name);
    const tr = kept && kept.signature === signature ? kept.tr : queueRow(q);
    rows.set(q.name, { signature, tr });
    fragment.append(tr);
  }
  overview.rows = rows;
  tbody.replaceChildren(fragment);
  const n = (data.queues || []).length;
  const alerting = (data.queues || []).filter((q) => (q.alerts || []).length).length;
  const summary = document.getElementById('overview-summary');
  // Stream groups alert on their own rows (streams.js): counted here too.
  const groups = (data.streams || []).flatMap((st) => st.groups || []);
  const groupsAlerting = groups.filter((g) => (g.alerts || []).length).length;
  summary.textContent = `${n} ${n === 1 ? 'queue' : 'queues'}` +
    (alerting ? `, ${alerting} with alerts` : ', no alerts') +
    (groupsAlerting ? `; ${groupsAlerting} consumer ${groupsAlerting === 1 ? 'group' : 'groups'} with alerts` : '') +
    ` · updated ${fmtTime(data.generated_at)}`;
  const hidden = document.getElementById('hidden-queues');
  if (data.hidden_queues > 0) {
    hidden.textContent = `${data.hidden_queues} ${data.hidden_queues === 1 ? 'queue is' : 'queues are'} hidden: ` +
      `role ${state.session ? state.session.role : ''} may not read ${data.hidden_queues === 1 ? 'it' : 'them'}.`;
    hidden.hidden = false;
  } else {
    hidden.hidden = true;
  }
  renderRefused(data.refused_queues || []);
  renderStreams(data.streams);
}

// Queues whose tables would run their owner's code as the console's role:
// named with pgmq's reason, never read (docs/console.md#safety).
function renderRefused(refused) {
  const box = document.getElementById('refused-queues');
  box.hidden = refused.length === 0;
  if (!refused.length) return;
  const n = refused.length;
  const role = state.session ? state.session.role : 'the console\'s role';
  // "code": pgmq's rule found what the table carries; "owner": without the
  // rule (upstream pgmq), its owner lacks the console role's privileges.
  const byOwner = refused.every((q) => q.kind === 'owner');
  const items = refused.map((q) => el('li', { 'data-refused': q.name, 'data-kind': q.kind || '' },
    el('strong', null, q.name), q.kind === 'owner' ? `: ${q.reason}` : `: its table carries ${q.reason}`));
  box.replaceChildren(
    el('p', null, `${n} ${n === 1 ? 'queue is' : 'queues are'} not read: ` + (byOwner
      ? `without pgmq-cpp's rule for queue tables the console cannot tell what code ${n === 1 ? 'its table' : 'their tables'} ` +
        `would run as ${role}, and ${n === 1 ? 'its owner lacks' : 'their owners lack'} the privileges of ${role}.`
      : `${n === 1 ? 'its table' : 'their tables'} would run another role's code as ${role}.`)),
    el('ul', null, ...items));
}

export function showOverview(view, gen) {
  overview.data = null;
  renderShell(view);
  const tick = async () => {
    try {
      const started = performance.now();
      const data = await api('/api/overview');
      if (gen !== state.generation) return;
      const fetched = performance.now();
      overview.data = data;
      renderRows(data);
      // How long this refresh took, from the request to the rendered rows,
      // and of that the answer (request, server, JSON parse).
      const table = document.getElementById('overview');
      table.dataset.fetchMs = String(Math.round(fetched - started));
      table.dataset.refreshMs = String(Math.round(performance.now() - started));
      document.getElementById('overview-error').hidden = true;
      setConn(`updated ${fmtTime(data.generated_at)}`, false);
    } catch (e) {
      if (gen !== state.generation) return;
      const line = document.getElementById('overview-error');
      line.textContent = `Could not refresh: ${errorText(e)}. Showing the last figures.`;
      line.hidden = false;
      setConn('not updating', true);
    }
    if (gen === state.generation) state.timer = window.setTimeout(tick, REFRESH_MS);
  };
  tick();
}
