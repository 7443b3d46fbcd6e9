import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openOrm } from '../src/db/orm.ts';
import { testDatabase } from './helpers.ts';

/**
 * The migrations and the entities agree (issue 26): on a freshly migrated database, MikroORM's
 * schema diff against the entities holds nothing but what the migrations own on purpose, listed
 * below with the reason. A column an entity has and no migration adds shows here as
 * `alter table … add column …` (a type or nullability the migration got wrong, as `alter column`),
 * and fails the test: the service would otherwise start, and fail on the first query naming it.
 */
const OWNED_BY_MIGRATIONS: [RegExp, string][] = [
  [
    /^drop table if exists "(idempotency_key|rate_limit|websocket_hold)" cascade;$/,
    'tables only SQL of our own reads and writes (src/services/idempotency.ts, the rate limiter, src/server/websocket-holds.ts): no entity',
  ],
  [
    /^drop function if exists "websocket_admit"\(integer, integer, uuid, integer, integer\);$/,
    "a key's websocket admission, one statement through a pooler (src/server/websocket-holds.ts)",
  ],
  [/^alter table "clinic" drop column "chat_seq";$/, 'the chat sequence, advanced by SQL only'],
  [/^drop index "clinic_phone_unique";$/, "a partial unique index (a clinic's phone, when it has one)"],
  [
    /^alter table "\w+" alter column "(created_at|updated_at)" drop default;$/,
    'timestamps added to existing catalog tables, with now() to fill their rows; the entities set them',
  ],
  [
    /^(drop index|create index) "(conversation|message)_clinic_id_\w+_index"( on .*)?;$/,
    'chat keyset indexes in descending order, and the sync indexes (updated_at, seq), which the entities do not declare',
  ],
  [
    /^alter table "(conversation|message)" alter column "seq" set default '0';$/,
    "seq is drawn from the clinic's chat_seq on every insert; the migration gives the column no default",
  ],
  [
    /^drop (trigger if exists "event_notify_after_insert" on "event"|function if exists "event_event_notify_after_insert_fn"\(\));$/,
    'the outbox NOTIFY trigger',
  ],
  [
    /^alter table "(appointment|working_hours)" drop constraint "\w+_no_overlap";$/,
    'exclusion constraints (btree_gist): a race is refused by PostgreSQL (DESIGN.md, Writes)',
  ],
];

let orm: MikroORM;
let drop: () => Promise<void>;

beforeAll(async () => {
  const db = await testDatabase();
  drop = db.drop;
  orm = await openOrm(db.url, { requestTimeouts: false });
});
afterAll(async () => {
  await orm?.close();
  await drop?.();
});

/** The statements of the diff from the migrated database to the entities. */
async function diff(): Promise<string[]> {
  const sql = await orm.schema.getUpdateSchemaSQL({ wrap: false });
  return sql
    .split('\n')
    .map((s) => s.trim())
    .filter((s) => s !== '' && !s.startsWith('--') && !/^set (names|session_replication_role)/.test(s));
}

/**
 * What the diff says about the keys that include `clinic_id` (Migration20261205000000ShardReady,
 * test/shard-ready.test.ts): the entities keep `id` as their primary key and single-column
 * references, while the database has primary keys (id, clinic_id) and foreign keys
 * (clinic_id, x_id) -> (clinic_id, id). Exactly the statements that would undo those, read from
 * the catalog, so a key the migrations lack altogether still shows.
 */
async function shardKeyStatements(): Promise<Set<string>> {
  const rows = await orm.em
    .getConnection()
    .execute<
      { table: string; name: string; contype: string; target: string | null; cols: string[]; del: string }[]
    >(
      `select t.relname as "table", c.conname as name, c.contype, f.relname as target, c.confdeltype as del,
            (select array_agg(a.attname::text order by k.n) from unnest(c.conkey) with ordinality as k(att, n)
               join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.att) as cols
       from pg_constraint c join pg_class t on t.oid = c.conrelid left join pg_class f on f.oid = c.confrelid
      where c.connamespace = 'public'::regnamespace and c.contype in ('p', 'f') and cardinality(c.conkey) = 2
        and 'clinic_id' = any(select a.attname from pg_attribute a where a.attrelid = c.conrelid and a.attnum = any(c.conkey))`,
    );
  const out = new Set<string>();
  for (const r of rows) {
    if (r.contype === 'p' && r.cols.join() === 'id,clinic_id') {
      out.add(`alter table "${r.table}" drop constraint "${r.name}";`);
      out.add(`alter table "${r.table}" add primary key ("id");`);
    } else if (r.contype === 'f' && r.cols[0] === 'clinic_id') {
      const rule = r.del === 'n' ? ' on delete set null' : r.del === 'c' ? ' on delete cascade' : '';
      out.add(`alter table "${r.table}" drop constraint "${r.name}";`);
      out.add(
        `alter table "${r.table}" add constraint "${r.name}" foreign key ("${r.cols[1]}") references "${r.target}" ("id")${rule};`,
      );
    }
  }
  return out;
}

it('every entity column, type and nullability is in the migrations (the schema diff is what they own)', async () => {
  const statements = await diff();
  const shardKeys = await shardKeyStatements();
  const unexplained = statements.filter(
    (s) => !shardKeys.has(s) && !OWNED_BY_MIGRATIONS.some(([re]) => re.test(s)),
  );
  expect(unexplained, 'entities and migrations disagree: add a migration (or fix the entity)').toEqual([]);
  // Every reason still explains something: a stale one would hide the next change of its kind.
  const stale = OWNED_BY_MIGRATIONS.filter(([re]) => !statements.some((s) => re.test(s))).map(
    ([, why]) => why,
  );
  expect(stale).toEqual([]);
});
