// pgmq console: the page. Vanilla JS, no build step, no external resources.
//
// Rules (docs/console.md, the server's Content-Security-Policy):
// - no inline scripts, styles or event handlers: everything is wired here
//   with addEventListener, and styled by class names from style.css;
// - message bodies, headers and queue names are user data: they reach the
//   page through textContent (el() below) and attribute values only, never
//   through innerHTML.
//
// Routes: #/ the overview of every queue, #/queue/<encodeURIComponent(name)>
// one queue's page.
'use strict';

(() => {
  const REFRESH_MS = 5000;
  const SVG_NS = 'http://www.w3.org/2000/svg';

  // What the alert names of /api/overview mean (docs/monitoring.md).
  const ALERTS = {
    oldest_visible: {
      short: 'messages wait too long',
      long: 'Messages wait too long: visible messages wait and the oldest message is older than 5 minutes.',
    },
    dead_letters: {
      short: 'dead letters waiting',
      long: 'Messages wait in its dead-letter queue: they reached their delivery limit.',
    },
    default_partition: {
      short: 'overran its partitions',
      long: 'The default partition is not empty: the queue overran its partitions and maintenance fails for it. Recover it with CALL pgmq.recover_partitioned_queue(…).',
    },
    runway: {
      short: 'runway under 10 min',
      long: 'At the current send rate its premade partitions run out within 10 minutes (or have run out).',
    },
  };

  const state = {
    session: null,
    timer: null,
    generation: 0, // bumped on every route change: late answers of an old view are dropped
    sort: loadSort(),
    overview: null,
    overviewRows: new Map(), // queue name -> { signature, tr } of the rows on the page
  };

  // ---------------------------------------------------------------- helpers

  // el('td', {class: 'num', 'data-col': 'visible'}, 'text' or nodes...)
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    setAttrs(node, attrs);
    append(node, children);
    return node;
  }

  function svg(tag, attrs, ...children) {
    const node = document.createElementNS(SVG_NS, tag);
    setAttrs(node, attrs);
    append(node, children);
    return node;
  }

  function setAttrs(node, attrs) {
    if (!attrs) return;
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') node.setAttribute('class', v);
      else if (k === 'text') node.textContent = v;
      else node.setAttribute(k, v === true ? '' : String(v));
    }
  }

  function append(node, children) {
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  const intFormat = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

  function fmtInt(n) {
    return n === null || n === undefined ? '—' : intFormat.format(n);
  }

  function fmtRate(r) {
    if (r === null || r === undefined) return '—';
    if (r === 0) return '0';
    if (r < 10) return r.toFixed(2);
    if (r < 100) return r.toFixed(1);
    return intFormat.format(Math.round(r));
  }

  // 42 s, 10 min 3 s, 2 h 5 min, 3 d 4 h
  function fmtDuration(sec) {
    if (sec === null || sec === undefined) return '—';
    const s = Math.max(0, Math.floor(sec));
    if (s < 60) return `${s} s`;
    if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
    if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
    return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
  }

  function fmtTime(iso) {
    if (!iso) return '—';
    const d = new Date(iso);
    return Number.isNaN(d.getTime()) ? String(iso) : d.toLocaleTimeString('en-GB');
  }

  function queueHref(name) {
    return `#/queue/${encodeURIComponent(name)}`;
  }

  function apiQueue(name) {
    return `/api/queues/${encodeURIComponent(name)}`;
  }

  class ApiError extends Error {
    constructor(status, message, sqlstate) {
      super(message);
      this.status = status;
      this.sqlstate = sqlstate || null;
    }
  }

  async function api(path, options) {
    let res;
    try {
      res = await fetch(path, Object.assign({ credentials: 'same-origin', cache: 'no-store' }, options));
    } catch (e) {
      throw new ApiError(0, 'cannot reach the console server');
    }
    let body = null;
    try {
      body = await res.json();
    } catch (e) {
      body = null;
    }
    if (!res.ok) {
      const msg = body && typeof body.error === 'string' ? body.error : `HTTP ${res.status}`;
      throw new ApiError(res.status, msg, body && body.sqlstate);
    }
    return body;
  }

  function errorText(e) {
    if (!(e instanceof ApiError)) return String(e && e.message ? e.message : e);
    let t = e.message;
    if (e.status === 503) t = `database unreachable: ${t}`;
    if (e.sqlstate) t += ` (SQLSTATE ${e.sqlstate})`;
    return t;
  }

  // ------------------------------------------------------- header and status

  function setConn(text, isError) {
    const c = document.getElementById('conn');
    c.textContent = text;
    c.classList.toggle('conn-error', Boolean(isError));
  }

  function showStatus(kind, text) {
    const box = document.getElementById('status');
    document.getElementById('status-text').textContent = text;
    box.dataset.kind = kind; // done | error | info
    box.className = `status status-${kind}`;
    box.hidden = false;
  }

  function hideStatus() {
    const box = document.getElementById('status');
    box.hidden = true;
    document.getElementById('status-text').textContent = '';
    delete box.dataset.kind;
  }

  async function loadSession() {
    const s = await api('/api/session');
    state.session = s;
    const who = document.getElementById('session');
    who.textContent = `${s.role}@${s.database}`;
    who.title = `PostgreSQL ${s.server_version}`;
    document.getElementById('readonly').hidden = Boolean(s.actions);
    document.body.classList.toggle('readonly', !s.actions);
    return s;
  }

  function actionsOn() {
    return Boolean(state.session && state.session.actions);
  }

  // Every action: confirm, POST with the CSRF token, say what happened.
  async function runAction(question, path, body) {
    if (!window.confirm(question)) {
      showStatus('info', 'Cancelled: nothing was changed.');
      return false;
    }
    showStatus('info', 'Working…');
    try {
      const res = await api(path, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'X-Pgmq-Console-Token': state.session ? state.session.csrf_token : '',
        },
        body: JSON.stringify(body || {}),
      });
      showStatus('done', res && res.done ? res.done : 'done');
      return true;
    } catch (e) {
      showStatus('error', `Failed: ${errorText(e)}`);
      return false;
    }
  }

  // ------------------------------------------------------------- sparklines

  // What a rate series says, for a tooltip: its span, maximum and last value.
  function sparkTitle(points, label) {
    const pts = numbers(points);
    if (pts.length === 0) return `${label}: no samples yet`;
    const max = pts.reduce((m, p) => Math.max(m, p), 0);
    const span = fmtDuration(pts.length * (state.session ? state.session.sample_seconds : 1));
    return `${label} over the last ${span}: max ${fmtRate(max)}/s, last ${fmtRate(pts[pts.length - 1])}/s`;
  }

  function numbers(points) {
    return Array.isArray(points) ? points.filter((p) => typeof p === 'number') : [];
  }

  // An inline SVG of a rate series (oldest first), scaled to its own maximum.
  // Two shapes at most (its base line is the CSS border): an overview draws
  // two per queue, so each element counts on every refresh. The caller puts
  // sparkTitle() on the element around it.
  function sparkline(points, label) {
    const w = 64;
    const h = 16;
    const pts = numbers(points);
    const max = pts.reduce((m, p) => Math.max(m, p), 0);
    const last = pts.length ? pts[pts.length - 1] : null;
    const node = svg('svg', {
      class: 'spark',
      width: w,
      height: h,
      viewBox: `0 0 ${w} ${h}`,
      role: 'img',
      'aria-label': label,
      'data-points': pts.length,
      'data-max': max,
      'data-last': last === null ? '' : last,
    });
    if (pts.length === 0) return node;
    const step = pts.length > 1 ? w / (pts.length - 1) : 0;
    const y = (p) => (max > 0 ? h - 1 - (p / max) * (h - 3) : h - 1).toFixed(1);
    const coords = pts.map((p, i) => `${(i * step).toFixed(1)},${y(p)}`);
    if (pts.length === 1) coords.push(`${w},${y(pts[0])}`);
    node.append(svg('polygon', { class: 'spark-area', points: `0,${h} ${coords.join(' ')} ${w},${h}` }));
    node.append(svg('polyline', { class: 'spark-line', points: coords.join(' ') }));
    return node;
  }

  // --------------------------------------------------------------- overview

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
    { key: 'dead_lettered', label: 'Dead letters', num: true, value: (q) => q.dead_lettered, title: 'Messages of this queue waiting in its dead-letter queue' },
    { key: 'runway_messages', label: 'Runway msgs', num: true, value: (q) => q.runway_messages, title: 'Partitioned: messages that still fit in premade partitions' },
    { key: 'runway_seconds', label: 'Runway time', num: true, value: (q) => q.runway_seconds, title: 'Partitioned: how long the runway lasts at the current send rate' },
    { key: 'default_rows', label: 'Default rows', num: true, value: (q) => q.default_partition_rows, title: 'Partitioned: rows in the default partitions (should be 0)' },
    { key: 'alerts', label: 'Alerts', num: true, value: (q) => (q.alerts || []).length },
  ];

  function lastOf(a) {
    return Array.isArray(a) && a.length ? a[a.length - 1] : null;
  }

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
      window.localStorage.setItem('pgmq-console-sort', JSON.stringify(state.sort));
    } catch (e) {
      /* not kept across reloads then */
    }
  }

  function sortedQueues(queues) {
    const col = COLUMNS.find((c) => c.key === state.sort.key) || COLUMNS[0];
    const sign = state.sort.dir === 'asc' ? 1 : -1;
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

  function renderOverviewShell(view) {
    state.overviewRows = new Map();
    const head = el('tr');
    for (const c of COLUMNS) {
      const btn = el('button', { type: 'button', class: 'sort', 'data-sort': c.key, title: c.title || null }, c.label);
      btn.addEventListener('click', () => {
        if (state.sort.key === c.key) state.sort.dir = state.sort.dir === 'asc' ? 'desc' : 'asc';
        else state.sort = { key: c.key, dir: c.num ? 'desc' : 'asc' };
        saveSort();
        if (state.overview) renderOverviewRows(state.overview);
      });
      head.append(el('th', { 'data-col': c.key, class: c.num ? 'num' : null, scope: 'col' }, btn));
    }
    append(view, [
      el('div', { class: 'page-head' },
        el('h1', null, 'Queues'),
        el('span', { id: 'overview-summary', class: 'muted' })),
      el('p', { id: 'hidden-queues', class: 'notice', hidden: true }),
      el('div', { id: 'refused-queues', class: 'notice', hidden: true }),
      el('p', { id: 'overview-error', class: 'error-line', hidden: true }),
      el('div', { class: 'table-wrap' },
        el('table', { id: 'overview', class: 'grid' }, el('thead', null, head), el('tbody'))),
      el('p', { class: 'legend muted' },
        'Rows with an alert are highlighted and name it (alert queries of docs/monitoring.md). ',
        'Click a column header to sort; click again to reverse. Refreshed every 5 s.'),
    ]);
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

  function badges(q) {
    const out = [];
    if (q.paused) out.push(el('span', { class: 'badge badge-paused', 'data-badge': 'paused' }, 'paused'));
    if (q.partitioned) out.push(el('span', { class: 'badge badge-part', 'data-badge': 'partitioned' }, 'partitioned'));
    if (q.unlogged) out.push(el('span', { class: 'badge', 'data-badge': 'unlogged' }, 'unlogged'));
    return out;
  }

  function overviewRow(q) {
    const alerts = q.alerts || [];
    const has = (a) => alerts.includes(a);
    const tr = el('tr', {
      'data-queue': q.name,
      'data-alerts': alerts.join(' '),
      'data-paused': q.paused ? 'true' : 'false',
      class: [alerts.length ? 'alert' : '', q.paused ? 'paused' : ''].join(' ').trim() || null,
    });
    tr.append(
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
      numCell('dead_lettered', q.dead_lettered, undefined, has('dead_letters') ? 'cell-alert' : null),
      numCell('runway_messages', q.runway_messages, undefined, has('runway') ? 'cell-alert' : null),
      numCell('runway_seconds', q.runway_seconds, fmtDuration(q.runway_seconds), has('runway') ? 'cell-alert' : null),
      numCell('default_rows', q.default_partition_rows, undefined, has('default_partition') ? 'cell-alert' : null),
      el('td', { 'data-col': 'alerts', class: 'alerts' },
        alerts.map((a) => el('span', {
          class: 'alert-name',
          'data-alert': a,
          title: ALERTS[a] ? ALERTS[a].long : a,
        }, ALERTS[a] ? ALERTS[a].short : a.replace(/_/g, ' ')))),
    );
    return tr;
  }

  function renderOverviewRows(data) {
    const table = document.getElementById('overview');
    if (!table) return;
    for (const th of table.querySelectorAll('thead th')) {
      const key = th.dataset.col;
      if (key === state.sort.key) th.setAttribute('aria-sort', state.sort.dir === 'asc' ? 'ascending' : 'descending');
      else th.removeAttribute('aria-sort');
    }
    table.dataset.sort = `${state.sort.key} ${state.sort.dir}`;
    table.dataset.generatedAt = data.generated_at || '';
    const tbody = table.tBodies[0];
    const queues = sortedQueues(data.queues || []);
    // A row is rebuilt only when its queue's figures changed: the rows of
    // idle queues, most of a large overview, are kept and only moved.
    const rows = new Map();
    const fragment = document.createDocumentFragment();
    if (queues.length === 0) {
      fragment.append(el('tr', { class: 'empty' }, el('td', { colspan: COLUMNS.length }, 'No queues.')));
    }
    for (const q of queues) {
      const signature = JSON.stringify(q);
      const kept = state.overviewRows.get(q.name);
      const tr = kept && kept.signature === signature ? kept.tr : overviewRow(q);
      rows.set(q.name, { signature, tr });
      fragment.append(tr);
    }
    state.overviewRows = rows;
    tbody.replaceChildren(fragment);
    const n = (data.queues || []).length;
    const alerting = (data.queues || []).filter((q) => (q.alerts || []).length).length;
    const summary = document.getElementById('overview-summary');
    summary.textContent = `${n} ${n === 1 ? 'queue' : 'queues'}` +
      (alerting ? `, ${alerting} with alerts` : ', no alerts') +
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
  }

  // Queues whose tables would run their owner's code as the console's role:
  // named with pgmq's reason, never read (docs/console.md#safety).
  function renderRefused(refused) {
    const box = document.getElementById('refused-queues');
    box.hidden = refused.length === 0;
    if (!refused.length) return;
    const n = refused.length;
    const items = refused.map((q) => el('li', null, el('strong', null, q.name), `: its table carries ${q.reason}`));
    box.replaceChildren(
      el('p', null, `${n} ${n === 1 ? 'queue is' : 'queues are'} not read: ${n === 1 ? 'its table' : 'their tables'} ` +
        `would run another role's code as ${state.session ? state.session.role : 'the console\'s role'}.`),
      el('ul', null, ...items));
  }

  function showOverview(view, gen) {
    renderOverviewShell(view);
    const tick = async () => {
      try {
        const started = performance.now();
        const data = await api('/api/overview');
        if (gen !== state.generation) return;
        const fetched = performance.now();
        state.overview = data;
        renderOverviewRows(data);
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

  // ------------------------------------------------------------ queue page

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

  const SOURCES = [
    { key: 'queue', label: 'Messages' },
    { key: 'archive', label: 'Archive' },
    { key: 'dead', label: 'Dead letters' },
  ];

  function showQueue(view, gen, name) {
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
        el('section', { class: 'panel' }, el('h2', null, 'Policies'),
          el('table', { id: 'policies', class: 'grid kv' }, el('tbody')),
          el('p', { id: 'policies-unset', class: 'muted small', hidden: true })),
        el('section', { id: 'partitions-panel', class: 'panel', hidden: true }, el('h2', null, 'Partitions'),
          el('div', { class: 'table-wrap' }, el('table', { id: 'partitions', class: 'grid' })))),
      el('section', { class: 'panel browse' },
        el('div', { id: 'tabs', class: 'tabs', role: 'tablist' }),
        el('form', { id: 'browse-form', class: 'browse-form', autocomplete: 'off' }),
        el('p', { id: 'browse-error', class: 'error-line', hidden: true }),
        el('p', { id: 'browse-info', class: 'muted' }),
        el('div', { class: 'table-wrap' }, el('table', { id: 'messages', class: 'grid messages' })),
        el('div', { class: 'pager' },
          el('button', { id: 'page-first', type: 'button' }, '« First'),
          el('button', { id: 'page-prev', type: 'button' }, '‹ Previous'),
          el('button', { id: 'page-next', type: 'button' }, 'Next ›'))),
    ]);

    buildBrowseForm(page);
    document.getElementById('page-first').addEventListener('click', () => {
      page.cursors = [null];
      loadMessages(page, gen);
    });
    document.getElementById('page-prev').addEventListener('click', () => {
      if (page.cursors.length > 1) page.cursors.pop();
      loadMessages(page, gen);
    });
    document.getElementById('page-next').addEventListener('click', () => {
      if (page.nextCursor === null) return;
      page.cursors.push(page.nextCursor);
      loadMessages(page, gen);
    });

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
      renderTabs(page, gen);
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
    append(dl, [
      summaryItem('visible', 'Visible', q.visible),
      summaryItem('leased', 'Leased', q.leased),
      summaryItem('delayed', 'Delayed', q.delayed),
      summaryItem('total', 'Total', q.total),
      summaryItem('oldest', 'Oldest visible', q.oldest_visible_age_sec, fmtDuration(q.oldest_visible_age_sec), has('oldest_visible')),
      summaryItem('send_rate', 'Sends/s', lastOf(q.send_rate), fmtRate(lastOf(q.send_rate))),
      summaryItem('read_rate', 'Reads/s', lastOf(q.read_rate), fmtRate(lastOf(q.read_rate))),
      q.dead_letter_queue !== null && q.dead_letter_queue !== undefined
        ? summaryItem('dead_lettered', 'Dead letters', q.dead_lettered, undefined, has('dead_letters'))
        : null,
      q.partitioned ? summaryItem('runway_messages', 'Runway msgs', q.runway_messages, undefined, has('runway')) : null,
      q.partitioned ? summaryItem('runway_seconds', 'Runway time', q.runway_seconds, fmtDuration(q.runway_seconds), has('runway')) : null,
      q.partitioned ? summaryItem('default_rows', 'Default rows', q.default_partition_rows, undefined, has('default_partition')) : null,
    ]);
    // the two sparklines, larger, under the numbers
    const spark = el('div', { class: 'summary-sparks' },
      el('span', { class: 'muted' }, 'sends/s '),
      el('span', { title: sparkTitle(q.send_rate, 'sends/s') }, sparkline(q.send_rate, 'sends/s')),
      el('span', { class: 'muted' }, ' reads/s '),
      el('span', { title: sparkTitle(q.read_rate, 'reads/s') }, sparkline(q.read_rate, 'reads/s')));
    dl.append(el('div', { class: 'summary-wide' }, spark));

    renderPolicies(page.info.policies);
    renderPartitions(page.info.partitions || []);
    renderActions(page, gen);
  }

  function renderPolicies(p) {
    const tbody = document.getElementById('policies').tBodies[0];
    clear(tbody);
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
    const line = document.getElementById('policies-unset');
    line.textContent = unset.length ? `Not set: ${unset.join(', ')}.` : '';
    line.hidden = unset.length === 0;
  }

  function renderPartitions(parts) {
    const panel = document.getElementById('partitions-panel');
    const table = document.getElementById('partitions');
    clear(table);
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
    table.append(el('thead', null, el('tr', null, cols.map(([k, l, , n]) => el('th', { class: n ? 'num' : null, scope: 'col' }, l)))));
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
    box.hidden = false;
    const q = page.info.queue;
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
        const what = n === null ? `all ${waiting} dead-lettered messages` : `up to ${fmtInt(n)} dead-lettered messages`;
        if (await runAction(
          `Redrive queue "${name}"?\n\nMoves ${what} of "${name}" from "${q.dead_letter_queue}" back to "${name}", oldest first, visible at once.`,
          `${apiQueue(name)}/redrive`, { qty: n })) after();
      });
      box.append(el('span', { class: 'action-group' }, btn, qty));
    }

    if (q.paused) {
      const btn = el('button', { id: 'action-resume', type: 'button', class: 'btn' }, 'Resume');
      btn.addEventListener('click', async () => {
        if (await runAction(`Resume queue "${name}"?\n\nReaders receive its messages again.`,
          `${apiQueue(name)}/resume`, {})) after();
      });
      box.append(btn);
    } else {
      const btn = el('button', { id: 'action-pause', type: 'button', class: 'btn' }, 'Pause');
      btn.addEventListener('click', async () => {
        if (await runAction(`Pause queue "${name}"?\n\nSends are still accepted; every read returns nothing until it is resumed.`,
          `${apiQueue(name)}/pause`, {})) after();
      });
      box.append(btn);
    }

    const purge = el('button', { id: 'action-purge', type: 'button', class: 'btn btn-danger' }, 'Purge');
    purge.addEventListener('click', async () => {
      if (await runAction(
        `Purge queue "${name}"?\n\nDeletes all ${fmtInt(q.total)} messages in it now, visible, leased and delayed. The archive is kept. This cannot be undone.`,
        `${apiQueue(name)}/purge`, {})) after();
    });
    box.append(purge);
  }

  function renderTabs(page, gen) {
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

  function buildBrowseForm(page) {
    const form = document.getElementById('browse-form');
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

  async function loadMessages(page, gen) {
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
      if (gen !== state.generation) return;
      table.removeAttribute('aria-busy');
      showBrowseError(errorText(e));
      loaded(table);
      return;
    }
    if (gen !== state.generation) return;
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

  function jsonText(v, pretty) {
    if (v === null || v === undefined) return '';
    return pretty ? JSON.stringify(v, null, 2) : JSON.stringify(v);
  }

  // PostgreSQL's timestamptz text (2026-12-02T21:17:10.08306+00:00): parsed
  // with the fraction cut to milliseconds, which every Date parser takes.
  function parseTs(text) {
    const m = /^(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d:\d\d)(\.\d+)?([+-]\d\d(?::?\d\d)?|Z)?$/.exec(String(text));
    if (!m) return null;
    const frac = m[3] ? m[3].slice(0, 4).padEnd(4, '0') : '';
    let zone = m[4] || 'Z';
    if (/^[+-]\d\d$/.test(zone)) zone += ':00';
    const d = new Date(`${m[1]}T${m[2]}${frac}${zone}`);
    return Number.isNaN(d.getTime()) ? null : d;
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

  function renderMessages(page, data) {
    const table = document.getElementById('messages');
    clear(table);
    const archive = page.source === 'archive';
    table.dataset.source = page.source;
    table.dataset.order = page.order;
    const timeCol = archive ? 'Archived at' : 'Visible at (vt)';
    table.append(el('thead', null, el('tr', null,
      el('th', { class: 'num', scope: 'col' }, 'msg_id'),
      el('th', { class: 'num', scope: 'col' }, 'read_ct'),
      el('th', { scope: 'col' }, 'Enqueued at'),
      el('th', { scope: 'col' }, timeCol),
      el('th', { scope: 'col' }, 'Headers'),
      el('th', { scope: 'col' }, 'Message'))));
    const tbody = el('tbody');
    const msgs = data.messages || [];
    for (const m of msgs) {
      const headers = el('pre', { class: 'json' }, jsonText(m.headers, false));
      const body = el('pre', { class: 'json' }, jsonText(m.message, false));
      const tr = el('tr', { 'data-msg-id': m.msg_id, 'data-read-ct': m.read_ct, title: 'Click to expand' },
        el('td', { class: 'num', 'data-col': 'msg_id' }, String(m.msg_id)),
        el('td', { class: 'num', 'data-col': 'read_ct' }, String(m.read_ct)),
        timeCell('enqueued_at', m.enqueued_at, false),
        timeCell(archive ? 'archived_at' : 'vt', archive ? m.archived_at : m.vt, !archive),
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
      tbody.append(el('tr', { class: 'empty' }, el('td', { colspan: 6 },
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

  // ---------------------------------------------------------------- routing

  function route() {
    state.generation += 1;
    const gen = state.generation;
    window.clearTimeout(state.timer);
    state.overview = null;
    const view = document.getElementById('view');
    clear(view);
    const hash = window.location.hash || '#/';
    const m = /^#\/queue\/(.+)$/.exec(hash);
    document.getElementById('nav-overview').classList.toggle('active', !m);
    if (m) {
      let name;
      try {
        name = decodeURIComponent(m[1]);
      } catch (e) {
        view.append(el('p', { class: 'error-line' }, 'Bad queue address.'));
        return;
      }
      document.title = `${name} · pgmq console`;
      view.dataset.view = 'queue';
      showQueue(view, gen, name);
    } else {
      document.title = 'Queues · pgmq console';
      view.dataset.view = 'overview';
      showOverview(view, gen);
    }
  }

  async function connect() {
    try {
      await loadSession();
    } catch (e) {
      document.getElementById('session').textContent = 'not connected';
      setConn(errorText(e), true);
      // Retry until the server answers: the views need the session's token.
      window.setTimeout(connect, REFRESH_MS);
      return;
    }
    route();
  }

  function start() {
    document.getElementById('status-close').addEventListener('click', hideStatus);
    window.addEventListener('hashchange', () => {
      hideStatus();
      if (state.session) route();
    });
    connect();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
