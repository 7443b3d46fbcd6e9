import type { EntityName } from '@mikro-orm/core';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openOrm } from '../src/db/orm.ts';
import { globalTables } from '../src/entities/global-tables.ts';
import { allEntities, tenantEntities } from '../src/entities/index.ts';
import { QUEUE_SCHEMA } from '../src/lib/job-queue.ts';
import { testDatabase } from './helpers.ts';

/**
 * Ready to shard by clinic (issue 35, DESIGN.md "Scale", docs/scale.md): read from the catalogs
 * of a migrated database, so that distributing the clinic tables by `clinic_id` (Citus) is
 * configuration, not a schema change under load.
 * - every table of `public` has a non-null `clinic_id`, or is declared global
 *   (src/entities/global-tables.ts, with why);
 * - every primary key, unique index and exclusion constraint of a clinic table includes
 *   `clinic_id` (an exclusion constraint with `=` on it): Citus can only enforce uniqueness
 *   within a shard, so it refuses any that does not;
 * - every foreign key between clinic tables pairs `clinic_id` with `clinic_id`, so no row can
 *   point at another clinic's row and both rows live on one shard (co-location); a foreign key to
 *   a reference table is fine, and a global table points at reference tables only.
 * pg-boss's schema is out of scope (src/entities/global-tables.ts says why); any other schema
 * fails the test, so a table cannot hide from it there.
 */

const PUBLIC = 'public';
const KEY = 'clinic_id';
const declared = globalTables as Record<string, { kind: 'reference' | 'local'; why: string }>;

let db: Awaited<ReturnType<typeof testDatabase>>;
let client: pg.Client;

beforeAll(async () => {
  db = await testDatabase();
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
});
afterAll(async () => {
  await client?.end();
  await db?.drop();
});

interface Table {
  name: string;
  /** The column `clinic_id`'s number, and whether it is `not null`; null when it has none. */
  key: { attnum: number; notNull: boolean } | null;
}

async function tables(c: pg.Client): Promise<Map<string, Table>> {
  const { rows } = await c.query<{ name: string; attnum: number | null; not_null: boolean | null }>(
    `select t.relname as name, a.attnum, a.attnotnull as not_null
       from pg_class t
       left join pg_attribute a on a.attrelid = t.oid and a.attname = $2 and not a.attisdropped
      where t.relnamespace = $1::regnamespace and t.relkind in ('r', 'p')`,
    [PUBLIC, KEY],
  );
  return new Map(
    rows.map((r) => [
      r.name,
      { name: r.name, key: r.attnum === null ? null : { attnum: r.attnum, notNull: r.not_null === true } },
    ]),
  );
}

const isClinicTable = (t: Table | undefined) => t !== undefined && !(t.name in declared);

/** Tables of `public` without a clinic key that are not declared global, and stale declarations. */
async function tableProblems(c: pg.Client): Promise<string[]> {
  const all = await tables(c);
  const problems: string[] = [];
  for (const t of all.values()) {
    if (t.name in declared) continue;
    if (!t.key)
      problems.push(
        `table ${t.name} has no ${KEY}: add one, or declare it in src/entities/global-tables.ts with why`,
      );
    else if (!t.key.notNull)
      problems.push(`table ${t.name}: ${KEY} is nullable (a distribution column must be set)`);
  }
  for (const name of Object.keys(declared))
    if (!all.has(name))
      problems.push(`src/entities/global-tables.ts declares ${name}, which no migration creates`);
  return problems;
}

/** Unique indexes (primary keys included) and exclusion constraints of clinic tables without the key. */
async function uniqueProblems(c: pg.Client): Promise<string[]> {
  const all = await tables(c);
  const { rows } = await c.query<{
    table: string;
    index: string;
    keys: number[];
    primary: boolean;
    exclusion_ops: string[] | null;
  }>(
    `select t.relname as "table", i.relname as "index", x.indisprimary as "primary",
            (x.indkey::int2[])[0:x.indnkeyatts - 1]::int[] as keys,
            (select array_agg(o.oprname::text order by k.n) from unnest(con.conexclop) with ordinality as k(op, n)
               join pg_operator o on o.oid = k.op) as exclusion_ops
       from pg_index x
       join pg_class t on t.oid = x.indrelid
       join pg_class i on i.oid = x.indexrelid
       left join pg_constraint con on con.conindid = x.indexrelid and con.contype = 'x'
      where t.relnamespace = $1::regnamespace and (x.indisunique or x.indisexclusion)
      order by 1, 2`,
    [PUBLIC],
  );
  const problems: string[] = [];
  for (const r of rows) {
    const t = all.get(r.table);
    if (!isClinicTable(t) || !t?.key) continue;
    const what = r.exclusion_ops ? 'exclusion constraint' : r.primary ? 'primary key' : 'unique index';
    const at = r.keys.indexOf(t.key.attnum);
    if (at < 0) problems.push(`${r.table}: ${what} ${r.index} does not include ${KEY}`);
    else if (r.exclusion_ops && r.exclusion_ops[at] !== '=')
      problems.push(
        `${r.table}: exclusion constraint ${r.index} compares ${KEY} with ${r.exclusion_ops[at]}, not =`,
      );
  }
  return problems;
}

/** Foreign keys that could cross clinics, or that Citus could not keep once the tables are distributed. */
async function foreignKeyProblems(c: pg.Client): Promise<string[]> {
  const all = await tables(c);
  const { rows } = await c.query<{
    table: string;
    name: string;
    target: string;
    target_schema: string;
    pairs: { from: string; to: string }[];
  }>(
    `select t.relname as "table", con.conname as name, f.relname as target,
            f.relnamespace::regnamespace::text as target_schema,
            (select json_agg(json_build_object('from', a.attname, 'to', b.attname) order by k.n)
               from unnest(con.conkey, con.confkey) with ordinality as k(src, dst, n)
               join pg_attribute a on a.attrelid = con.conrelid and a.attnum = k.src
               join pg_attribute b on b.attrelid = con.confrelid and b.attnum = k.dst) as pairs
       from pg_constraint con
       join pg_class t on t.oid = con.conrelid
       join pg_class f on f.oid = con.confrelid
      where con.contype = 'f' and t.relnamespace = $1::regnamespace
      order by 1, 2`,
    [PUBLIC],
  );
  const problems: string[] = [];
  for (const r of rows) {
    const fk = `${r.table}: foreign key ${r.name} (${r.pairs.map((p) => p.from).join(', ')}) -> ${r.target}(${r.pairs.map((p) => p.to).join(', ')})`;
    if (r.target_schema !== PUBLIC) {
      problems.push(`${fk} points into schema ${r.target_schema}`);
      continue;
    }
    const from = all.get(r.table);
    const to = all.get(r.target);
    if (isClinicTable(from)) {
      if (isClinicTable(to)) {
        if (!r.pairs.some((p) => p.from === KEY && p.to === KEY))
          problems.push(`${fk} does not pair ${KEY} with ${KEY}: it could point at another clinic's row`);
      } else if (declared[r.target]?.kind !== 'reference')
        problems.push(`${fk} points at ${r.target}, which is not a reference table`);
    } else if (declared[r.target]?.kind !== 'reference')
      problems.push(`${fk}: a global table may point at reference tables only`);
  }
  return problems;
}

describe('ready to shard by clinic', () => {
  it('the schemas are public and the queue’s, nothing else', async () => {
    const { rows } = await client.query<{ nspname: string }>(
      `select nspname from pg_namespace
        where nspname not in ('information_schema') and nspname not like 'pg\\_%' order by 1`,
    );
    expect(rows.map((r) => r.nspname)).toEqual([QUEUE_SCHEMA, PUBLIC].sort());
  });

  it('every table carries clinic_id, or is declared global with why', async () => {
    // information_schema, too, for the plain SQL reader: the same tables, the same answer.
    const { rows } = await client.query<{ table_name: string }>(
      `select t.table_name from information_schema.tables t
        where t.table_schema = $1 and t.table_type = 'BASE TABLE'
          and not exists (select 1 from information_schema.columns c
                           where c.table_schema = t.table_schema and c.table_name = t.table_name
                             and c.column_name = $2)
        order by 1`,
      [PUBLIC, KEY],
    );
    expect(
      rows.map((r) => r.table_name).filter((t) => !(t in declared)),
      'tables without clinic_id that src/entities/global-tables.ts does not declare',
    ).toEqual([]);
    expect(await tableProblems(client)).toEqual([]);
    for (const [name, { why }] of Object.entries(declared)) expect(why.length, name).toBeGreaterThan(20);
  });

  it('the tenant filter and this list agree: tenant entities are clinic tables, the other entities global', async () => {
    const orm = await openOrm(db.url, { requestTimeouts: false });
    try {
      const tenant = new Set<string>(tenantEntities.map((e) => e.name));
      const wrong = allEntities
        .map((e) => ({ name: e.name, table: orm.getMetadata().get(e as EntityName<object>).tableName }))
        .filter(({ name, table }) => tenant.has(name) === table in declared)
        .map(({ name, table }) =>
          tenant.has(name)
            ? `${name} is filtered by clinic but its table ${table} is declared global`
            : `${name} is not filtered by clinic (src/entities/index.ts) but its table ${table} is not declared global`,
        );
      expect(wrong).toEqual([]);
    } finally {
      await orm.close();
    }
  });

  it('every primary key, unique index and exclusion constraint of a clinic table includes clinic_id', async () => {
    expect(await uniqueProblems(client)).toEqual([]);
  });

  it('no foreign key crosses clinics: clinic tables pair clinic_id, global tables point at reference tables', async () => {
    expect(await foreignKeyProblems(client)).toEqual([]);
  });

  it('the checks fail, naming what broke (changes made in a transaction, rolled back)', async () => {
    await client.query('begin');
    try {
      await client.query('create table "shard_probe" ("id" serial primary key, "note" text)');
      await client.query('create unique index "patient_id_alone" on "patient" ("id")');
      await client.query(
        'alter table "payment" drop constraint "payment_patient_id_foreign", add constraint "payment_patient_id_foreign" foreign key ("patient_id") references "patient" ("id")',
      );
      await client.query(
        'alter table "clinic" add column "probe_patient_id" int, add constraint "clinic_probe_foreign" foreign key ("probe_patient_id") references "patient" ("id")',
      );
      await client.query(
        'alter table "working_hours" drop constraint "working_hours_no_overlap", add constraint "working_hours_no_overlap" exclude using gist ("provider_id" with =, "weekday" with =, int4range("start_minute", "end_minute") with &&)',
      );
      expect(await tableProblems(client)).toEqual([
        'table shard_probe has no clinic_id: add one, or declare it in src/entities/global-tables.ts with why',
      ]);
      expect(await uniqueProblems(client)).toEqual([
        'patient: unique index patient_id_alone does not include clinic_id',
        'working_hours: exclusion constraint working_hours_no_overlap does not include clinic_id',
      ]);
      expect(await foreignKeyProblems(client)).toEqual([
        'clinic: foreign key clinic_probe_foreign (probe_patient_id) -> patient(id): a global table may point at reference tables only',
        "payment: foreign key payment_patient_id_foreign (patient_id) -> patient(id) does not pair clinic_id with clinic_id: it could point at another clinic's row",
      ]);
    } finally {
      await client.query('rollback');
    }
    expect(await uniqueProblems(client)).toEqual([]);
  });
});
