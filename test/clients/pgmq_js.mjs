// test/clients/pgmq_js.mjs: upstream pgmq's JavaScript client, pgmq-js (the
// version pinned in package.json), against this extension. Run by
// test/integration/client_libraries.sh with PGHOST, PGPORT, PGUSER and
// PGDATABASE set; exit 0 is a pass.
//
// It does what an application does with the client (create a queue, send,
// read, archive, delete, pop, metrics, purge, drop) and checks each result
// against the queue tables, read with plain SQL through node-postgres.
// setVt is checked to fail as docs/getting-started.md says: the client sends
// its id untyped, which both set_vt(text, bigint, ...) and
// set_vt(text, bigint[], ...) accept (upstream pgmq 1.13 has the same four
// forms, so it fails there too).
import assert from 'node:assert/strict';
import pg from 'pg';
import { Pgmq } from 'pgmq-js';

const conn = {
  host: process.env.PGHOST,
  port: Number(process.env.PGPORT || 5432),
  user: process.env.PGUSER,
  database: process.env.PGDATABASE,
  password: process.env.PGPASSWORD || '',
  ssl: false, // pgmq-js turns TLS on unless told otherwise
};

let failures = 0;
async function check(what, fn) {
  try {
    await fn();
    console.log(`[pgmq-js] ok: ${what}`);
  } catch (error) {
    failures++;
    console.log(`[pgmq-js] FAIL: ${what}: ${error.stack || error}`);
  }
}

const sql = new pg.Client(conn);
await sql.connect();
const rows = async (text, params) => (await sql.query(text, params)).rows;

// skipExtensionCreation: false is the client's default, which runs CREATE
// EXTENSION IF NOT EXISTS pgmq CASCADE; the extension is there already.
const pgmq = await Pgmq.new({ ...conn }, { skipExtensionCreation: false });
const q = 'js_orders';

await check('queue.create makes the queue tables, and list() names the queue', async () => {
  await pgmq.queue.create(q);
  const [t] = await rows("SELECT to_regclass('pgmq.q_js_orders') AS q, to_regclass('pgmq.a_js_orders') AS a");
  assert.equal(t.q, 'pgmq.q_js_orders');
  assert.equal(t.a, 'pgmq.a_js_orders');
  const found = (await pgmq.queue.list()).find((x) => x.name === q);
  assert.ok(found, 'list() has the queue');
  assert.equal(found.isPartitioned, false);
});

const order = { order_id: 17, items: [{ sku: 'A-1', qty: 2 }], note: 'ünïcode ✓' };
let firstId;
await check('msg.send returns the id of a row whose message is the object sent', async () => {
  firstId = await pgmq.msg.send(q, order);
  assert.equal(typeof firstId, 'number');
  const [r] = await rows('SELECT message, read_ct FROM pgmq.q_js_orders WHERE msg_id = $1', [firstId]);
  assert.deepEqual(r.message, order);
  assert.equal(r.read_ct, 0);
});

let batchIds;
await check('msg.sendBatch returns one new id per message, in order', async () => {
  batchIds = await pgmq.msg.sendBatch(q, [{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
  assert.equal(batchIds.length, 4);
  assert.deepEqual(batchIds, [firstId + 1, firstId + 2, firstId + 3, firstId + 4]);
});

await check('msg.send with a delay keeps the message invisible', async () => {
  const id = await pgmq.msg.send(q, { later: true }, 3600);
  const [r] = await rows("SELECT vt > now() + interval '59 minutes' AS delayed FROM pgmq.q_js_orders WHERE msg_id = $1", [id]);
  assert.equal(r.delayed, true);
});

await check('msg.read leases the oldest message and returns it as sent', async () => {
  const m = await pgmq.msg.read(q, 30);
  assert.equal(m.msgId, firstId);
  assert.equal(m.readCount, 1);
  assert.deepEqual(m.message, order);
  const [r] = await rows("SELECT read_ct, vt > now() + interval '25 seconds' AS leased FROM pgmq.q_js_orders WHERE msg_id = $1", [firstId]);
  assert.equal(r.read_ct, 1);
  assert.equal(r.leased, true);
});

await check('msg.readBatch skips leased and delayed messages', async () => {
  const ms = await pgmq.msg.readBatch(q, 30, 10);
  assert.deepEqual(ms.map((m) => m.msgId), batchIds);
  assert.deepEqual(ms.map((m) => m.message.n), [1, 2, 3, 4]);
  assert.equal((await pgmq.msg.readBatch(q, 30, 10)).length, 0);
});

await check('msg.archive moves a message to the archive table and returns true', async () => {
  assert.equal(await pgmq.msg.archive(q, firstId), true);
  const [r] = await rows(
    'SELECT (SELECT count(*) FROM pgmq.q_js_orders WHERE msg_id = $1)::int AS queued, ' +
      '(SELECT message FROM pgmq.a_js_orders WHERE msg_id = $1) AS archived',
    [firstId],
  );
  assert.equal(r.queued, 0);
  assert.deepEqual(r.archived, order);
  assert.equal(await pgmq.msg.archive(q, firstId), false, 'archiving it again finds nothing');
});

await check('msg.archiveBatch returns the ids it archived, leaving out unknown ones', async () => {
  const done = await pgmq.msg.archiveBatch(q, [batchIds[0], 999999]);
  assert.deepEqual(done, [batchIds[0]]);
});

await check('msg.delete removes a message and returns true, then false', async () => {
  assert.equal(await pgmq.msg.delete(q, batchIds[1]), true);
  assert.equal(await pgmq.msg.delete(q, batchIds[1]), false);
  const [r] = await rows('SELECT count(*)::int AS n FROM pgmq.q_js_orders WHERE msg_id = $1', [batchIds[1]]);
  assert.equal(r.n, 0);
});

await check('msg.deleteBatch returns the ids it deleted', async () => {
  const done = await pgmq.msg.deleteBatch(q, [batchIds[2], batchIds[3], 999999]);
  assert.deepEqual([...done].sort((a, b) => a - b), [batchIds[2], batchIds[3]]);
});

await check('msg.pop takes a visible message for good, and nothing when none is visible', async () => {
  const id = await pgmq.msg.send(q, { pop: 'me' });
  const m = await pgmq.msg.pop(q);
  assert.equal(m.msgId, id);
  assert.deepEqual(m.message, { pop: 'me' });
  const [r] = await rows('SELECT count(*)::int AS n FROM pgmq.q_js_orders WHERE msg_id = $1', [id]);
  assert.equal(r.n, 0);
  assert.equal(await pgmq.msg.pop(q), undefined, 'only the delayed message is left, and it is not visible');
});

await check('queue.getMetrics counts the delayed message left and every send', async () => {
  const m = await pgmq.queue.getMetrics(q);
  assert.equal(m.queueName, q);
  assert.equal(m.queueLength, 1);
  assert.equal(m.totalMessages, 7);
  const all = await pgmq.queue.getAllMetrics();
  assert.ok(all.some((x) => x.queueName === q && x.queueLength === 1));
});

await check('msg.setVt fails with 42725: the client binds the id untyped', async () => {
  const [r] = await rows('SELECT msg_id FROM pgmq.q_js_orders');
  await assert.rejects(pgmq.msg.setVt(q, Number(r.msg_id), 0), (e) => {
    assert.equal(e.code, '42725');
    assert.match(e.message, /function pgmq\.set_vt\(unknown, unknown, unknown\) is not unique/);
    return true;
  });
  // What docs/getting-started.md says to do instead: the same call in SQL,
  // with the placeholders cast.
  const done = await rows('SELECT msg_id FROM pgmq.set_vt($1, $2::bigint, $3::integer)', [q, r.msg_id, 0]);
  assert.equal(done.length, 1);
  assert.equal((await pgmq.msg.read(q, 30)).msgId, Number(r.msg_id));
});

await check('queue.purge empties the queue, queue.drop removes its tables', async () => {
  await pgmq.queue.purge(q);
  const [r] = await rows('SELECT count(*)::int AS n FROM pgmq.q_js_orders');
  assert.equal(r.n, 0);
  await pgmq.queue.drop(q);
  const [t] = await rows("SELECT to_regclass('pgmq.q_js_orders') AS q, to_regclass('pgmq.a_js_orders') AS a");
  assert.equal(t.q, null);
  assert.equal(t.a, null);
  assert.equal((await pgmq.queue.list()).some((x) => x.name === q), false);
});

await pgmq.close();
await sql.end();
console.log(failures === 0 ? '[pgmq-js] PASS' : `[pgmq-js] ${failures} check(s) failed`);
process.exit(failures === 0 ? 0 : 1);
