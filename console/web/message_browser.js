// The message browser of a queue's page: its messages, archive and dead
// letters (tabs), newest or oldest first, filtered by headers or a JSON path,
// a page at a time. Browsing is a plain SELECT on the server: it leases
// nothing.
//
// Dead letters (the Dead letters tab, and the messages of a dead-letter
// queue) also show why each was set aside, from the headers pgmq wrote:
// x-pgmq-dead-letter (source queue, reason, deliveries, when moved) and
// x-pgmq-failures (the last failures a consumer reported). Anyone who may
// send to a queue can write those headers, so any JSON may be in them: they
// are shown as text, whatever they hold.
import { api, apiQueue, errorText } from './api_client.js';
import { append, clear, el, queueHref } from './dom.js';
import { fmtDuration, jsonText, parseTs } from './format.js';
import { isDeadLetterQueue } from './labels.js';
import { state } from './shell.js';

const SOURCES = [
  { key: 'queue', label: 'Messages' },
  { key: 'archive', label: 'Archive' },
  { key: 'dead', label: 'Dead letters' },
];

// The section of the queue's page that browses; page holds what it shows
// (source, order, filters, the cursors of the pages seen).
export function browsePanel(page, gen) {
  const first = el('button', { id: 'page-first', type: 'button' }, '« First');
  const prev = el('button', { id: 'page-prev', type: 'button' }, '‹ Previous');
  const next = el('button', { id: 'page-next', type: 'button' }, 'Next ›');
  const form = el('form', { id: 'browse-form', class: 'browse-form', autocomplete: 'off' });
  buildForm(form, page);
  first.addEventListener('click', () => {
    page.cursors = [null];
    loadMessages(page, gen);
  });
  prev.addEventListener('click', () => {
    if (page.cursors.length > 1) page.cursors.pop();
    loadMessages(page, gen);
  });
  next.addEventListener('click', () => {
    if (page.nextCursor === null) return;
    page.cursors.push(page.nextCursor);
    loadMessages(page, gen);
  });
  return el('section', { class: 'panel browse' },
    el('div', { id: 'tabs', class: 'tabs', role: 'tablist' }),
    form,
    el('p', { id: 'browse-error', class: 'error-line', hidden: true }),
    el('p', { id: 'browse-info', class: 'muted' }),
    el('div', { class: 'table-wrap' }, el('table', { id: 'messages', class: 'grid messages' })),
    el('div', { class: 'pager' }, first, prev, next));
}

export function renderTabs(page) {
  const tabs = document.getElementById('tabs');
  clear(tabs);
  const hasDead = Boolean(page.info.queue.dead_letter_queue);
  for (const s of SOURCES) {
    if (s.key === 'dead' && !hasDead) continue;
    const t = el('button', {
      id: `tab-${s.key}`, type: 'button', role: 'tab', class: 'tab', 'data-source': s.key,
      'aria-selected': page.source === s.key ? 'true' : 'false',
    }, s.label);
    t.addEventListener('click', () => {
      page.source = s.key;
      page.cursors = [null];
      for (const other of tabs.querySelectorAll('.tab')) {
        other.setAttribute('aria-selected', other === t ? 'true' : 'false');
      }
      applyForm(page);
    });
    tabs.append(t);
  }
}

function buildForm(form, page) {
  const order = el('select', { id: 'order', 'aria-label': 'Order' },
    el('option', { value: 'newest' }, 'Newest first'),
    el('option', { value: 'oldest' }, 'Oldest first'));
  const limit = el('select', { id: 'limit', 'aria-label': 'Page size' },
    [25, 50, 100, 200].map((n) => el('option', { value: n, selected: n === page.limit }, `${n} per page`)));
  const header = el('input', {
    id: 'filter-header', type: 'text', class: 'filter', spellcheck: 'false',
    placeholder: 'headers contain, e.g. {"tenant": "acme"}',
  });
  const path = el('input', {
    id: 'filter-path', type: 'text', class: 'filter', spellcheck: 'false',
    placeholder: 'body matches JSON path, e.g. $.customer ? (@ == "acme")',
  });
  const apply = el('button', { id: 'browse-apply', type: 'submit', class: 'btn' }, 'Apply');
  const reset = el('button', { id: 'browse-clear', type: 'button' }, 'Clear');
  append(form, [
    el('label', null, 'Order ', order),
    el('label', { class: 'grow' }, 'Header ', header),
    el('label', { class: 'grow' }, 'Path ', path),
    el('label', null, limit),
    apply, reset,
  ]);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    applyForm(page);
  });
  order.addEventListener('change', () => form.requestSubmit());
  limit.addEventListener('change', () => form.requestSubmit());
  reset.addEventListener('click', () => {
    header.value = '';
    path.value = '';
    form.requestSubmit();
  });
}

// Takes the filters, order and page size from the form (the inputs are
// what the user sees, so every load goes through here) and loads the
// first page. A header filter that is not a JSON object is refused here.
function applyForm(page) {
  const h = document.getElementById('filter-header').value.trim();
  if (h !== '') {
    let parsed;
    try {
      parsed = JSON.parse(h);
    } catch (e) {
      parsed = undefined;
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
      showBrowseError('The header filter must be a JSON object, such as {"tenant": "acme"}.');
      return;
    }
  }
  page.header = h;
  page.path = document.getElementById('filter-path').value.trim();
  page.order = document.getElementById('order').value;
  page.limit = Number(document.getElementById('limit').value);
  page.cursors = [null];
  loadMessages(page, state.generation);
}

function showBrowseError(text) {
  const line = document.getElementById('browse-error');
  line.textContent = text;
  line.hidden = !text;
}

export async function loadMessages(page, gen) {
  // Only the latest request is shown: an answer for the tab or page left
  // meanwhile may arrive after the one asked for since.
  page.latestLoad += 1;
  const ticket = page.latestLoad;
  const stale = () => gen !== state.generation || ticket !== page.latestLoad;
  const params = new URLSearchParams();
  params.set('source', page.source);
  params.set('order', page.order);
  params.set('limit', String(page.limit));
  const cursor = page.cursors[page.cursors.length - 1];
  if (cursor !== null) params.set('cursor', String(cursor));
  if (page.header) params.set('header', page.header);
  if (page.path) params.set('path', page.path);
  const table = document.getElementById('messages');
  table.setAttribute('aria-busy', 'true');
  let data;
  try {
    data = await api(`${apiQueue(page.name)}/messages?${params}`);
  } catch (e) {
    if (stale()) return;
    table.removeAttribute('aria-busy');
    showBrowseError(errorText(e));
    loaded(table);
    return;
  }
  if (stale()) return;
  showBrowseError('');
  page.nextCursor = data.next_cursor === undefined ? null : data.next_cursor;
  renderMessages(page, data);
  table.removeAttribute('aria-busy');
  loaded(table);
}

// data-loads counts the answers shown (tests wait for the next one).
function loaded(table) {
  table.dataset.loads = String(Number(table.dataset.loads || 0) + 1);
}

// Shown as the server wrote it, to the second; the full text in the title.
// For vt, a time still ahead says how long until the message is visible.
function timeCell(col, text, relative) {
  const td = el('td', { class: 'time', 'data-col': col, title: text || null });
  if (!text) {
    td.textContent = '—';
    return td;
  }
  const m = /^(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d:\d\d)/.exec(text);
  td.append(m ? `${m[1]} ${m[2]}` : text);
  const d = relative ? parseTs(text) : null;
  if (d && d.getTime() > Date.now() + 500) {
    td.append(' ', el('span', { class: 'in' }, `in ${fmtDuration((d.getTime() - Date.now()) / 1000)}`));
  }
  return td;
}

// ------------------------------------------------------------ dead letters

function isObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

// A header value as text (null when absent): a string as it is, anything
// else as its JSON.
function valueText(v) {
  if (v === null || v === undefined) return null;
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function deadLetterOf(m) {
  return isObject(m.headers) && isObject(m.headers['x-pgmq-dead-letter']) ? m.headers['x-pgmq-dead-letter'] : {};
}

function failuresOf(m) {
  return isObject(m.headers) && Array.isArray(m.headers['x-pgmq-failures']) ? m.headers['x-pgmq-failures'] : [];
}

// The text in a block of its own, which style.css can give a width.
function textCell(col, text, cls) {
  if (text === null) return el('td', { 'data-col': col, class: `${cls} none` }, '—');
  return el('td', { 'data-col': col, class: cls }, el('div', null, text));
}

// The failures a consumer reported (pgmq.retry, pgmq.dead_letter), oldest
// first: each reason, and which delivery failed; when, in the title.
function failuresCell(m) {
  const failures = failuresOf(m);
  const td = el('td', { 'data-col': 'failures', class: failures.length ? 'failures' : 'failures none' });
  if (failures.length === 0) {
    td.textContent = '—';
    return td;
  }
  const list = el('ol', { class: 'failure-list' });
  for (const f of failures) {
    const reason = valueText(isObject(f) ? f.reason : f);
    const delivery = isObject(f) ? valueText(f.read_ct) : null;
    const at = isObject(f) ? valueText(f.at) : null;
    list.append(el('li', { title: at ? `at ${at}` : null },
      el('span', { class: 'failure-reason' }, reason === null ? '(no reason)' : reason),
      delivery === null ? null : el('span', { class: 'failure-delivery muted' }, ` · delivery ${delivery}`)));
  }
  td.append(list);
  return td;
}

// The columns of the dead-letter view; withSource: the queue each came
// from (a dead-letter queue's own page, where they come from several).
function deadLetterColumns(withSource) {
  return [
    { label: 'msg_id', num: true, cell: (m) => el('td', { class: 'num', 'data-col': 'msg_id' }, String(m.msg_id)) },
    withSource && {
      label: 'From queue',
      title: 'The queue it was dead-lettered from',
      cell: (m) => {
        const from = valueText(deadLetterOf(m).queue);
        if (from === null) return el('td', { 'data-col': 'dl_queue', class: 'none' }, '—');
        return el('td', { 'data-col': 'dl_queue' }, el('a', { href: queueHref(from) }, from));
      },
    },
    {
      label: 'Reason',
      title: 'Why it was set aside: max_deliveries reached, or the reason its consumer gave',
      cell: (m) => textCell('dl_reason', valueText(deadLetterOf(m).reason), 'reason'),
    },
    {
      label: 'Deliveries',
      num: true,
      title: 'How many times it was delivered before it was set aside',
      cell: (m) => textCell('dl_deliveries', valueText(deadLetterOf(m).read_ct), 'num'),
    },
    {
      label: 'Moved at',
      title: 'When it was moved to the dead-letter queue',
      cell: (m) => timeCell('dl_moved_at', valueText(deadLetterOf(m).moved_at), false),
    },
    { label: 'Last failures', title: 'The failures its consumers reported, oldest first', cell: failuresCell },
  ].filter(Boolean);
}

// ----------------------------------------------------------------- table

function messageColumns(page) {
  const archive = page.source === 'archive';
  return [
    { label: 'msg_id', num: true, cell: (m) => el('td', { class: 'num', 'data-col': 'msg_id' }, String(m.msg_id)) },
    { label: 'read_ct', num: true, cell: (m) => el('td', { class: 'num', 'data-col': 'read_ct' }, String(m.read_ct)) },
    { label: 'Enqueued at', cell: (m) => timeCell('enqueued_at', m.enqueued_at, false) },
    archive
      ? { label: 'Archived at', cell: (m) => timeCell('archived_at', m.archived_at, false) }
      : { label: 'Visible at (vt)', cell: (m) => timeCell('vt', m.vt, true) },
  ];
}

function renderMessages(page, data) {
  const table = document.getElementById('messages');
  clear(table);
  const onDeadLetterQueue = page.source === 'queue' && isDeadLetterQueue(page.info.queue);
  const deadView = page.source === 'dead' || onDeadLetterQueue;
  table.dataset.source = page.source;
  table.dataset.order = page.order;
  table.dataset.view = deadView ? 'dead-letters' : 'messages';
  const columns = deadView ? deadLetterColumns(onDeadLetterQueue) : messageColumns(page);
  table.append(el('thead', null, el('tr', null,
    columns.map((c) => el('th', { class: c.num ? 'num' : null, scope: 'col', title: c.title || null }, c.label)),
    el('th', { scope: 'col' }, 'Headers'),
    el('th', { scope: 'col' }, 'Message'))));
  const tbody = el('tbody');
  const msgs = data.messages || [];
  for (const m of msgs) {
    const headers = el('pre', { class: 'json' }, jsonText(m.headers, false));
    const body = el('pre', { class: 'json' }, jsonText(m.message, false));
    const tr = el('tr', { 'data-msg-id': m.msg_id, 'data-read-ct': m.read_ct, title: 'Click to expand' },
      columns.map((c) => c.cell(m)),
      el('td', { 'data-col': 'headers' }, headers),
      el('td', { 'data-col': 'message' }, body));
    tr.addEventListener('click', () => {
      const open = tr.classList.toggle('expanded');
      headers.textContent = jsonText(m.headers, open);
      body.textContent = jsonText(m.message, open);
    });
    tbody.append(tr);
  }
  if (msgs.length === 0) {
    const filtered = page.header || page.path;
    tbody.append(el('tr', { class: 'empty' }, el('td', { colspan: columns.length + 2 },
      filtered ? 'No message matches the filter.' : 'No messages.')));
  }
  table.append(tbody);
  const src = SOURCES.find((s) => s.key === page.source);
  const n = msgs.length;
  const range = n ? `, ids ${msgs[0].msg_id} to ${msgs[n - 1].msg_id}` : '';
  document.getElementById('browse-info').textContent =
    `${src ? src.label : page.source}: page ${page.cursors.length}, ${n} ${n === 1 ? 'message' : 'messages'}${range}` +
    `${page.order === 'newest' ? ', newest first' : ', oldest first'}. Browsing does not lease messages.`;
  document.getElementById('page-next').disabled = page.nextCursor === null;
  document.getElementById('page-prev').disabled = page.cursors.length <= 1;
  document.getElementById('page-first').disabled = page.cursors.length <= 1;
}
