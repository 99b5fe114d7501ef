-- lifecycle: create / create_unlogged / drop_queue / purge_queue and the
-- name helpers (API.md §1.2, §2.1, §2.2, §2.8, §2.10, §2.12).
-- Times are never printed: only facts about them.
\pset null '<NULL>'

-- A queue: create returns void and makes q_/a_ tables plus a meta row.
SELECT pgmq.create('lc_q');
SELECT queue_name, is_partitioned, is_unlogged, created_at IS NOT NULL AS has_created_at
  FROM pgmq.meta WHERE queue_name = 'lc_q';

-- Table and index layout, column order as upstream 1.10.1+.
\d pgmq.q_lc_q
\d pgmq.a_lc_q
-- No vt index (reads never use one) and free space in each page, so that a
-- read's update stays on its page without new index entries (HOT).
SELECT c.relname, c.reloptions, (SELECT count(*) FROM pg_index i WHERE i.indrelid = c.oid) AS indexes
FROM pg_class c WHERE c.oid IN ('pgmq.q_lc_q'::regclass, 'pgmq.a_lc_q'::regclass) ORDER BY 1;
-- The identity sequence has PostgreSQL's implicit name.
SELECT pg_get_serial_sequence('pgmq.q_lc_q', 'msg_id');

-- Idempotent: a second create is no error, PostgreSQL prints 4 NOTICEs,
-- and no second meta row appears.
SELECT pgmq.create('lc_q');
SELECT pgmq.create_non_partitioned('lc_q');
SELECT count(*) FROM pgmq.meta WHERE queue_name = 'lc_q';

-- A different create variant on an existing queue changes nothing.
SELECT pgmq.create_unlogged('lc_q');
SELECT relname, relpersistence FROM pg_class
 WHERE relnamespace = 'pgmq'::regnamespace AND relname IN ('q_lc_q', 'a_lc_q') ORDER BY relname;
SELECT is_unlogged FROM pgmq.meta WHERE queue_name = 'lc_q';

-- create_unlogged: only the queue table is UNLOGGED; the archive is logged.
SELECT pgmq.create_unlogged('lc_unlogged');
SELECT pgmq.create_unlogged('lc_unlogged');
SELECT relname, relpersistence FROM pg_class
 WHERE relnamespace = 'pgmq'::regnamespace AND relname IN ('q_lc_unlogged', 'a_lc_unlogged') ORDER BY relname;
SELECT queue_name, is_partitioned, is_unlogged FROM pgmq.meta WHERE queue_name = 'lc_unlogged';

-- create_non_partitioned is create.
SELECT pgmq.create_non_partitioned('lc_nonpart');
SELECT queue_name, is_partitioned, is_unlogged FROM pgmq.meta WHERE queue_name = 'lc_nonpart';

-- list_queues returns every meta row (queue_record).
SELECT queue_name, is_partitioned, is_unlogged, created_at <= now() AS created_before_now
  FROM pgmq.list_queues() WHERE queue_name LIKE 'lc\_%' ORDER BY queue_name;
SELECT pg_typeof(q) FROM pgmq.list_queues() AS q LIMIT 1;

-- Queue tables are not extension members (1.6.0+): nothing of a queue is
-- recorded in pg_depend with deptype 'e'; meta is a member.
SELECT c.relname, d.deptype
  FROM pg_depend d JOIN pg_class c ON c.oid = d.objid AND d.classid = 'pg_class'::regclass
 WHERE d.refclassid = 'pg_extension'::regclass
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pgmq')
   AND c.relnamespace = 'pgmq'::regnamespace
 ORDER BY c.relname;
SELECT count(*) AS queue_objects_in_extension
  FROM pg_depend d JOIN pg_class c ON c.oid = d.objid AND d.classid = 'pg_class'::regclass
 WHERE d.deptype = 'e' AND c.relname ~ '^(q|a)_lc_|archived_at_idx_lc_';
-- meta is registered for pg_dump.
SELECT extconfig::regclass[] FROM pg_extension WHERE extname = 'pgmq';

-- Name length: 47 characters is the limit, 48 fails (characters, checked
-- before anything is created).
SELECT pgmq.create(repeat('a', 48));
SELECT pgmq.create_unlogged(repeat('a', 48));
SELECT to_regclass('pgmq.q_' || repeat('a', 48)) IS NULL AS no_table_for_48;
SELECT pgmq.create(repeat('a', 47));
SELECT to_regclass(format('pgmq.%I', 'q_' || repeat('a', 47))) IS NOT NULL AS q_table,
       to_regclass(format('pgmq.%I', 'a_' || repeat('a', 47))) IS NOT NULL AS a_table,
       to_regclass(format('pgmq.%I', 'archived_at_idx_' || repeat('a', 47))) IS NOT NULL AS archive_index,
       to_regclass(format('pgmq.%I', 'q_' || repeat('a', 47) || '_msg_id_seq')) IS NOT NULL AS sequence;
SELECT pgmq.send(repeat('a', 47), '{"long": true}') > 0 AS sent;
SELECT message FROM pgmq.read(repeat('a', 47), 0, 1);
SELECT pgmq.drop_queue(repeat('a', 47));
-- validate_queue_name is the length rule alone.
SELECT pgmq.validate_queue_name(repeat('b', 47));
SELECT pgmq.validate_queue_name(repeat('b', 48));
-- The limit counts characters, not bytes: 48 two-byte characters get the
-- character-count message.
SELECT pgmq.validate_queue_name(repeat('é', 48));
-- This implementation refuses a name whose derived identifiers would pass
-- 63 bytes (upstream would silently truncate them): 24 two-byte characters
-- make "archived_at_idx_<name>" 64 bytes.
SELECT pgmq.create(repeat('é', 24));
SELECT pgmq.create(repeat('é', 23));
SELECT pgmq.drop_queue(repeat('é', 23));

-- Mixed case: tables are lowercased, meta keeps the spelling. A second
-- spelling is the same queue: it reuses the tables and the archive index
-- (named after the registered spelling) with NOTICEs, and adds no meta row
-- (upstream added a second row and a second index).
SELECT pgmq.create('LcMixed');
SELECT pgmq.create('lcmixed');
SELECT queue_name FROM pgmq.meta WHERE lower(queue_name) = 'lcmixed' ORDER BY queue_name COLLATE "C";
SELECT relname FROM pg_class
 WHERE relnamespace = 'pgmq'::regnamespace AND lower(relname) LIKE '%lcmixed%' ORDER BY relname COLLATE "C";
-- Any spelling reaches the same table.
SELECT pgmq.send('LCMIXED', '{"from": "upper"}') > 0 AS sent;
SELECT pgmq.send('lcmixed', '{"from": "lower"}') > 0 AS sent;
SELECT message FROM pgmq.read('LcMixed', 30, 10) ORDER BY msg_id;
SELECT queue_length FROM pgmq.metrics('lCmIxEd');
-- drop_queue removes the tables and the meta row under any spelling (upstream
-- removed only the row of that exact spelling).
SELECT pgmq.drop_queue('LcMixed');
SELECT queue_name FROM pgmq.meta WHERE lower(queue_name) = 'lcmixed';
-- Its tables are gone, so dropping it again is false with a NOTICE.
SELECT pgmq.drop_queue('lcmixed');

-- purge_queue: returns the number of messages, truncates the queue only,
-- and msg_ids continue (no RESTART IDENTITY).
SELECT pgmq.send('lc_q', '{"n": 1}') AS first_id \gset
SELECT pgmq.send_batch('lc_q', ARRAY['{"n": 2}', '{"n": 3}', '{"n": 4}']::jsonb[]) > 0 AS sent;
SELECT pgmq.archive('lc_q', :first_id);
SELECT pgmq.purge_queue('lc_q');
SELECT count(*) AS queue_rows FROM pgmq.q_lc_q;
SELECT count(*) AS archive_rows FROM pgmq.a_lc_q;
SELECT pgmq.purge_queue('lc_q');
SELECT pgmq.send('lc_q', '{"n": 5}') - :first_id AS id_after_purge;
SELECT pg_typeof(pgmq.purge_queue('lc_q'));

-- detach_archive is a deprecated no-op: a WARNING, the archive stays put.
SELECT pgmq.detach_archive('lc_q');
SELECT to_regclass('pgmq.a_lc_q') IS NOT NULL AS archive_still_there;

-- format_table_name: character check, then lower(prefix || '_' || name).
SELECT pgmq.format_table_name('MyQueue', 'q'), pgmq.format_table_name('queue-hyphened', 'a'),
       pgmq.format_table_name('cat_dog', 'q'), pgmq.format_table_name('Cat.Dog Ü', 'Q');
SELECT pgmq.format_table_name('dollar$fail', 'q');
SELECT pgmq.format_table_name('double--hyphen-fail', 'q');
SELECT pgmq.format_table_name('semicolon;fail', 'q');
SELECT pgmq.format_table_name('single''quote-fail', 'q');
-- Characters are checked before length in create*.
SELECT pgmq.create(repeat('a', 50) || '$');

-- acquire_queue_lock takes a transaction-scoped advisory lock on
-- hashtext('pgmq.queue_' || name), the raw name.
BEGIN;
SELECT pgmq.acquire_queue_lock('lc_q');
SELECT locktype, objid::bigint = (hashtext('pgmq.queue_lc_q')::bigint & 4294967295) AS key_matches, mode, granted
  FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid();
COMMIT;
SELECT count(*) AS advisory_locks_after_commit FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid();

-- drop_queue: true for an existing queue, false with a NOTICE otherwise.
SELECT pgmq.drop_queue('lc_nonpart');
SELECT to_regclass('pgmq.q_lc_nonpart') IS NULL AS q_gone, to_regclass('pgmq.a_lc_nonpart') IS NULL AS a_gone,
       NOT EXISTS (SELECT 1 FROM pgmq.meta WHERE queue_name = 'lc_nonpart') AS meta_gone;
SELECT pgmq.drop_queue('lc_nonpart');
SELECT pgmq.drop_queue('lc_never_created');
-- The deprecated two-argument form warns and always returns true.
SELECT pgmq.drop_queue('lc_unlogged', false);
SELECT to_regclass('pgmq.q_lc_unlogged') IS NULL AS dropped;
SELECT pgmq.drop_queue('lc_unlogged', true);

-- create inside a transaction that rolls back leaves nothing behind.
BEGIN;
SELECT pgmq.create('lc_rolled_back');
ROLLBACK;
SELECT to_regclass('pgmq.q_lc_rolled_back') IS NULL AS no_table,
       NOT EXISTS (SELECT 1 FROM pgmq.meta WHERE queue_name = 'lc_rolled_back') AS no_meta;
-- ... and a committed one works.
BEGIN;
SELECT pgmq.create('lc_in_txn');
SELECT pgmq.send('lc_in_txn', '{"txn": true}') > 0 AS sent;
COMMIT;
SELECT message FROM pgmq.pop('lc_in_txn');

-- Clean up.
SELECT pgmq.drop_queue('lc_in_txn');
SELECT pgmq.drop_queue('lc_q');
SELECT queue_name FROM pgmq.meta WHERE queue_name LIKE 'lc%' OR lower(queue_name) LIKE 'lc%';
SELECT relname FROM pg_class WHERE relnamespace = 'pgmq'::regnamespace AND relname ~* '(^[qa]_lc|idx_lc)';
