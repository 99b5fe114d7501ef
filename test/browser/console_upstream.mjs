// test/browser/console_upstream.mjs: the console's page against a database
// with upstream pgmq (the TEST-ONLY stand-in of one release, made by
// test/integration/console_browser.sh): its figures match SQL, what needs
// pgmq-cpp is named as not available (no empty columns, no buttons that
// would fail), a queue owned by another role is listed as not read with
// its owner, browsing and a purge work.
//
// Environment: CONSOLE_URL (a console with --allow-actions), PGDATABASE (and
// PGHOST/PGPORT/PGUSER) for psql, UPSTREAM_NAME ("upstream pgmq 1.12.0", as
// the page names it), DEFAULT_ROWS (1 when the release has
// default_partition_length, 1.13), CHROMIUM, SCREENSHOT (where to save the
// overview, for docs/managed-databases.md). Prints one line per check;
// exits 1 when any failed.
import { chromium } from 'playwright-core';
import { execFileSync } from 'node:child_process';

const BASE = process.env.CONSOLE_URL;
const NAME = process.env.UPSTREAM_NAME;
const DEFAULT_ROWS = process.env.DEFAULT_ROWS === '1';
if (!BASE || !NAME || !process.env.PGDATABASE) {
  console.error('console_upstream.mjs: set CONSOLE_URL, UPSTREAM_NAME and PGDATABASE (run console_browser.sh)');
  process.exit(2);
}

let failures = 0;
let checks = 0;
function check(name, cond, detail) {
  checks += 1;
  if (cond) {
    console.log(`ok   ${NAME}: ${name}`);
  } else {
    failures += 1;
    console.log(`FAIL ${NAME}: ${name}: ${detail === undefined ? 'false' : detail}`);
  }
  return cond;
}
const same = (name, got, want) => check(name, JSON.stringify(got) === JSON.stringify(want),
  `page ${JSON.stringify(got)}, SQL ${JSON.stringify(want)}`);

function sql(query) {
  return execFileSync('psql', ['-X', '-A', '-t', '-q', '-v', 'ON_ERROR_STOP=1', '-c', query], {
    encoding: 'utf8', env: process.env,
  }).trim();
}

// visible, leased, delayed, total of a queue table, as the overview counts them.
function sqlDepth(queue) {
  return sql(`SELECT concat_ws(',', count(*) FILTER (WHERE vt <= now()),
                count(*) FILTER (WHERE vt > now() AND read_ct > 0), count(*) FILTER (WHERE vt > now() AND read_ct = 0),
                count(*)) FROM pgmq."q_${queue}"`).split(',').map(Number);
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});

let exitCode = 1;
try {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(`console error: ${m.text()}`); });
  let accept = false;
  page.on('dialog', async (d) => {
    if (accept && d.type() === 'confirm') await d.accept();
    else {
      pageErrors.push(`unexpected ${d.type()} dialog: ${d.message()}`);
      await d.dismiss();
    }
    accept = false;
  });

  // ------------------------------------------------------------ overview
  await page.goto(`${BASE}/#/`);
  await page.waitForSelector('#overview tbody tr[data-queue="jobs"]', { timeout: 10000 });
  const notice = await page.$eval('#not-available', (p) => p.textContent).catch(() => '');
  check('the overview names what is not available with it', notice.includes(`Not available with ${NAME}`) &&
    ['dead-letter policies', 'pause', 'priorities', 'partition runway', 'failure reasons', 'redrive']
      .every((w) => notice.includes(w)), notice);
  const columns = await page.$$eval('#overview thead th', (ths) => ths.map((th) => th.dataset.col));
  check('no empty columns for what needs pgmq-cpp',
    !columns.includes('dead_lettered') && !columns.includes('runway_messages') && !columns.includes('runway_seconds') &&
    columns.includes('default_rows') === DEFAULT_ROWS, columns.join(' '));
  const row = await page.$eval('#overview tr[data-queue="jobs"]', (tr) => ['visible', 'leased', 'delayed', 'total']
    .map((k) => Number(tr.querySelector(`td[data-col="${k}"]`).dataset.value)));
  same('jobs: visible, leased, delayed and total as SQL counts them', row, sqlDepth('jobs'));
  const cells = await page.$eval('#overview tr[data-queue="jobs"]', (tr) => tr.querySelectorAll('td').length);
  same('a row has a cell for each column', cells, columns.length);
  const refused = await page.$$eval('#refused-queues li', (lis) => lis.map((li) => [li.dataset.refused, li.dataset.kind,
    li.textContent]));
  check('the tenant\'s queue is listed as not read, naming its owner', refused.length === 1 &&
    refused[0][0] === 'tenant_q' && refused[0][1] === 'owner' && refused[0][2].includes('owned by role browser_tenant'),
  JSON.stringify(refused));
  check('no pause badge anywhere', (await page.$$('[data-badge="paused"]')).length === 0);
  if (process.env.SCREENSHOT) await page.screenshot({ path: process.env.SCREENSHOT });

  // ------------------------------------------------------------ jobs' page
  const readCt = sql('SELECT string_agg(read_ct::text, \',\' ORDER BY msg_id) FROM pgmq.q_jobs');
  await page.goto(`${BASE}/#/queue/jobs`);
  await page.waitForFunction(() => Number((document.getElementById('messages') || {}).dataset?.loads || 0) > 0,
    null, { timeout: 10000 });
  const policies = await page.$eval('#policies-unset', (p) => [p.dataset.na || '', p.textContent, p.hidden]);
  check('the policies say they are not available', policies[0] === 'policies' && !policies[2] &&
    policies[1].includes(`not available with ${NAME}`), JSON.stringify(policies));
  same('actions: only Purge (no pause, resume or redrive in upstream pgmq)',
    await page.$$eval('#actions button', (bs) => bs.map((b) => b.id)), ['action-purge']);
  same('tabs: messages and archive, no dead letters',
    await page.$$eval('#tabs .tab', (ts) => ts.map((t) => t.dataset.source)), ['queue', 'archive']);
  same('the messages, newest first, as the table holds them',
    await page.$$eval('#messages tbody tr[data-msg-id]', (trs) => trs.map((tr) => Number(tr.dataset.msgId))),
    sql('SELECT string_agg(msg_id::text, \',\' ORDER BY msg_id DESC) FROM pgmq.q_jobs').split(',').map(Number));
  same('browsing changed no read_ct', sql('SELECT string_agg(read_ct::text, \',\' ORDER BY msg_id) FROM pgmq.q_jobs'),
    readCt);

  // ------------------------------------------------- a partitioned queue
  await page.goto(`${BASE}/#/queue/events`);
  await page.waitForSelector('#partitions-panel:not([hidden]) [data-na="partition_runway"]', { timeout: 10000 });
  check('a partitioned queue: the runway is said not available',
    (await page.$eval('[data-na="partition_runway"]', (c) => c.textContent)).includes(`not available with ${NAME}`));
  same('a partitioned queue: no runway figures',
    await page.$$eval('#summary [data-field^="runway"]', (ds) => ds.length), 0);

  // ---------------------------------------------------------------- purge
  const outbox = Number(sql('SELECT count(*) FROM pgmq.q_outbox'));
  await page.goto(`${BASE}/#/queue/outbox`);
  await page.waitForSelector('#action-purge');
  accept = true;
  await page.click('#action-purge');
  await page.waitForSelector('#status[data-kind="done"]', { timeout: 8000 });
  same('purge through the page: the status says what it did',
    await page.$eval('#status-text', (s) => s.textContent), `purged ${outbox} messages from outbox`);
  same('purge: SQL sees an empty queue', Number(sql('SELECT count(*) FROM pgmq.q_outbox')), 0);

  check('no script errors, CSP violations or unexpected dialogs', pageErrors.length === 0, pageErrors.join(' | '));
  exitCode = failures === 0 ? 0 : 1;
} catch (e) {
  check('the run', false, e && e.stack ? e.stack : String(e));
  exitCode = 1;
} finally {
  await browser.close();
}
console.log(`${checks - failures} of ${checks} checks passed (${NAME})`);
process.exit(exitCode);
