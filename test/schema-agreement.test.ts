import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openOrm } from '../src/lib/database.ts';
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

it('every entity column, type and nullability is in the migrations (the schema diff is what they own)', async () => {
  const statements = await diff();
  const unexplained = statements.filter((s) => !OWNED_BY_MIGRATIONS.some(([re]) => re.test(s)));
  expect(unexplained, 'entities and migrations disagree: add a migration (or fix the entity)').toEqual([]);
  // Every reason still explains something: a stale one would hide the next change of its kind.
  const stale = OWNED_BY_MIGRATIONS.filter(([re]) => !statements.some((s) => re.test(s))).map(
    ([, why]) => why,
  );
  expect(stale).toEqual([]);
});
