import { type EntityManager, type EntityName, ReferenceKind } from '@mikro-orm/postgresql';
import type pg from 'pg';
import { isTenantEntity } from '../entities/index.ts';
import { chargeRows, checkNotAborted } from '../lib/budget.ts';
import { pgTimestampToIso } from '../lib/timestamps.ts';
import { type NamedStatement, namedStatement, runNamed } from './named-statements.ts';

export interface LeanQuery {
  /** Root properties. A to-one relation named here comes back as `{ id }`. */
  fields: readonly string[];
  /** To-one relations to join, each with the properties to read from it (`id` is always read). */
  joins?: Record<string, readonly string[]>;
  where?: object;
  /** An extra SQL condition on the root (alias `e`), with `?` placeholders. */
  whereSql?: { sql: string; params: readonly (string | number)[] };
  /**
   * Where the root rows come from instead of the whole table: SQL (`?` placeholders) yielding
   * the table's own rows (every column), put in the table's place under the alias `e`. The joins,
   * the filters (the tenant's included), the order and the limit apply to them as to the table.
   * Such a query must prepare: its text is the QueryBuilder's with this source swapped in.
   */
  from?: { sql: string; params: readonly (string | number)[] };
  orderBy?: object | object[];
  limit?: number;
  /**
   * Every clinic's rows, the tenant filter off (the event relay serves every clinic's
   * subscribers); otherwise a clinic-owned entity is read through a clinic-bound EntityManager.
   */
  allClinics?: true;
}

/**
 * Read-only rows as plain objects shaped like their entities (to-one relations as nested
 * objects, points in time as ISO text), through MikroORM's QueryBuilder with the global filters
 * applied, the tenant scope included. Lists use this: hydrating entities into the unit of work
 * costs tens of microseconds a row (the bench measured em.find at three times the SQL's cost) and
 * a read has no use for it.
 *
 * Each query shape (entity, fields, joins, order, limit and the structure of the condition, but
 * not its values) is built by the QueryBuilder once; later calls of that shape reuse its SQL
 * with their own values in the same places (see `prepare`). The rows are mapped by a plan
 * compiled once per shape too, not by MikroORM's generic result mapper.
 */
export async function leanFind<R>(
  em: EntityManager,
  entity: EntityName<object>,
  q: LeanQuery,
  /** A connection of the caller's own to run the statement on (runNamed's `on`); the shape must prepare. */
  on?: pg.ClientBase,
): Promise<R[]> {
  const meta = em.getMetadata(entity) as unknown as Meta;
  const tenant = q.allClinics ? undefined : em.getFilterParams<{ clinicId?: number }>('tenant')?.clinicId;
  const values: unknown[] = [];
  const key = shapeKey(meta.className, q, tenant !== undefined, values);
  checkNotAborted();
  if (key === null) {
    if (on || q.from) throw unpreparedOn(meta);
    const built = await runBuilt(em, entity, q);
    chargeRows(built);
    return built.map(mapPlan(em, meta, q)) as R[];
  }
  let shape = shapes.get(key);
  if (!shape) {
    if (shapes.size >= MAX_SHAPES) shapes.clear();
    shape = {
      map: mapPlan(em, meta, q),
      statement: tenant === undefined && !q.allClinics ? null : await prepare(em, entity, q, values.length),
    };
    shapes.set(key, shape);
  }
  if (shape.statement) {
    const { statement, slots } = shape.statement;
    const params = slots.map((s) => (s === TENANT ? tenant : typeof s === 'number' ? values[s] : s.value));
    const res = await runNamed(em, statement, params, on);
    if (res.columns) {
      // A statement's columns come back in the same order every time: mapped by position.
      shape.fromArray ??= mapPlan(em, meta, q, res.columns);
      chargeRows(res.rows, res.columns);
      return res.rows.map(shape.fromArray) as R[];
    }
    chargeRows(res.rows);
    return res.rows.map(shape.map) as R[];
  }
  if (on || q.from) throw unpreparedOn(meta);
  const rows = await runBuilt(em, entity, q);
  chargeRows(rows);
  return rows.map(shape.map) as R[];
}

/** The QueryBuilder runs on the EntityManager's connections only: a read on a connection of its own must prepare. */
const unpreparedOn = (meta: Meta) =>
  new Error(
    `lean: a read of ${meta.className} on a connection of its own or from a source of its own must be a preparable shape.`,
  );

/** The unprepared path: the QueryBuilder builds and runs this call (exported for tests). */
export async function runBuilt(em: EntityManager, entity: EntityName<object>, q: LeanQuery): Promise<Row[]> {
  const qb = await buildQuery(em, entity, q, q.where, q.whereSql?.params);
  return (await qb.execute('all', false)) as Row[];
}

type Row = Record<string, unknown>;
type Meta = { className: string; properties: object };
type Prop = { kind: string; fieldNames: string[]; runtimeType?: string; targetMeta?: Meta };

/** A parameter of a prepared statement: the tenant, the n-th value of the call, or a constant of the shape. */
type Slot = typeof TENANT | number | { value: unknown };
const TENANT = 'tenant' as const;

interface Shape {
  /** Maps a row the QueryBuilder or a transaction returns (an object by column name). */
  map: (row: Row) => Row;
  /** Maps a prepared statement's row (an array in the statement's column order), made on its first result. */
  fromArray?: (row: unknown[]) => Row;
  /** null: this shape is built by the QueryBuilder on every call. */
  statement: { statement: NamedStatement; slots: Slot[] } | null;
}

// Shapes are few (a handful per list; batch loads pass their ids as one array parameter); the
// bound only guards against a caller that would make shapes out of values.
const MAX_SHAPES = 2000;
const shapes = new Map<string, Shape>();

async function buildQuery(
  em: EntityManager,
  entity: EntityName<object>,
  q: LeanQuery,
  where: object | undefined,
  sqlParams: readonly unknown[] | undefined,
) {
  const joins = q.joins ?? {};
  const qb = em.createQueryBuilder(entity, 'e').select(rootFields(q) as any);
  for (const [rel, fields] of Object.entries(joins)) {
    qb.leftJoinAndSelect(`e.${rel}` as any, `j_${rel}`, {}, ['id', ...fields] as any);
  }
  if (where) qb.where(where as any);
  if (q.whereSql) qb.andWhere(q.whereSql.sql, [...(sqlParams ?? [])]);
  if (q.orderBy) qb.orderBy(q.orderBy as any);
  if (q.limit) qb.limit(q.limit);
  await qb.applyFilters(q.allClinics ? { tenant: false } : undefined);
  return qb;
}

const rootFields = (q: LeanQuery) => ['id', ...q.fields.filter((f) => !(q.joins && f in q.joins))];

/**
 * The shape of a call as a string, collecting its values (strings, numbers and dates in the
 * condition, then whereSql's parameters) in a fixed order. null, booleans and array lengths are
 * part of the shape. null when the condition holds objects other than plain ones and dates
 * (an entity, say): such a call is built by the QueryBuilder.
 */
function shapeKey(entity: string, q: LeanQuery, tenant: boolean, values: unknown[]): string | null {
  const where = skeleton(q.where, values);
  if (where === null) return null;
  for (const p of q.whereSql?.params ?? []) values.push(p);
  for (const p of q.from?.params ?? []) values.push(p);
  return `${entity}|${q.allClinics ? 'all' : tenant}|${partText(q.fields)}|${partText(q.joins)}|${partText(q.orderBy)}|${q.limit ?? ''}|${where}|${q.whereSql?.sql ?? ''}|${q.from?.sql ?? ''}`;
}

const partTexts = new WeakMap<object, string>();

/**
 * The JSON of a part of a query's shape. Frozen parts (read plans, keyset orders) cannot change,
 * so theirs is made once (JSON of the columns on every call was most of the shape key's cost).
 */
function partText(v: unknown): string {
  if (v == null) return 'null';
  if (typeof v !== 'object' || !Object.isFrozen(v)) return JSON.stringify(v);
  let text = partTexts.get(v);
  if (text === undefined) {
    text = JSON.stringify(v);
    partTexts.set(v, text);
  }
  return text;
}

/** The condition's structure as text, values replaced by their type (collected in `values`); null: unpreparable. */
function skeleton(v: unknown, values: unknown[]): string | null {
  if (typeof v === 'string' || typeof v === 'number' || v instanceof Date) {
    values.push(v);
    return typeof v === 'number' ? '#n' : typeof v === 'string' ? '#s' : '#d';
  }
  if (Array.isArray(v)) {
    let out = '[';
    for (const x of v) {
      const part = skeleton(x, values);
      if (part === null) return null;
      out += `${part},`;
    }
    return `${out}]`;
  }
  if (v !== null && typeof v === 'object') {
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) return null;
    let out = '{';
    for (const k of Object.keys(v)) {
      const part = skeleton((v as Row)[k], values);
      if (part === null) return null;
      out += `${JSON.stringify(k)}:${part},`;
    }
    return `${out}}`;
  }
  return v === undefined ? 'null' : JSON.stringify(v);
}

/** The same structure with each value replaced by the next sentinel. */
function substitute(v: unknown, next: (value: unknown) => unknown): unknown {
  if (typeof v === 'string' || typeof v === 'number' || v instanceof Date) return next(v);
  if (Array.isArray(v)) return v.map((x) => substitute(x, next));
  if (v !== null && typeof v === 'object') {
    const out: Row = {};
    for (const k of Object.keys(v)) out[k] = substitute((v as Row)[k], next);
    return out;
  }
  return v;
}

// Sentinels: values no real call passes, recognisable among the QueryBuilder's parameters.
const SENTINEL_NUMBER = 1_987_000_000;
const SENTINEL_TIME = Date.UTC(2987, 0, 1);
const sentinelString = (i: number) => `\u0001cg-sentinel-${i}\u0001`;

/**
 * Builds the shape once with sentinels in place of the call's values and of the tenant, and
 * records where each lands among the QueryBuilder's parameters. Any other parameter is a constant
 * of the shape. A shape whose values the QueryBuilder does not pass through unchanged (inlined in
 * the SQL, converted, or repeated) is not prepared: it is built on every call instead.
 */
async function prepare(
  em: EntityManager,
  entity: EntityName<object>,
  q: LeanQuery,
  count: number,
): Promise<Shape['statement']> {
  const sentinels: unknown[] = [];
  const next = (v: unknown) => {
    const i = sentinels.length;
    const s =
      typeof v === 'number'
        ? SENTINEL_NUMBER + i
        : typeof v === 'string'
          ? sentinelString(i)
          : new Date(SENTINEL_TIME + i);
    sentinels.push(s);
    return s;
  };
  const where = substitute(q.where, next) as object | undefined;
  const sqlParams = (q.whereSql?.params ?? []).map(next);
  const fromParams = (q.from?.params ?? []).map(next);
  if (sentinels.length !== count) return null;
  const tenantSentinel = SENTINEL_NUMBER + count;
  const probe = em.fork();
  probe.setFilterParams('tenant', { clinicId: tenantSentinel });
  const built = (await buildQuery(probe, entity, q, where, sqlParams)).toQuery();
  const { sql, params } = q.from ? fromSwapped(em, entity, built, q.from.sql, fromParams) : built;

  const found = new Array<number>(count).fill(0);
  const slots: Slot[] = params.map((p) => {
    if (p === tenantSentinel) return TENANT;
    const i = sentinels.findIndex((s) => s === p || (s instanceof Date && p instanceof Date && +s === +p));
    if (i < 0) return { value: p };
    found[i]++;
    return i;
  });
  const leaked = sentinels.some((s) =>
    sql.includes(s instanceof Date ? String(s.getUTCFullYear()) : String(s).replaceAll('\u0001', '')),
  );
  const scoped = isTenantScoped(em, entity) && !q.allClinics;
  if (leaked || found.some((n) => n !== 1) || slots.includes(TENANT) !== scoped) {
    return null;
  }
  return { statement: namedStatement(sql), slots };
}

/**
 * The QueryBuilder's statement with `source` in the root table's place. The select list before
 * it holds no parameter, so the source's come first.
 */
function fromSwapped(
  em: EntityManager,
  entity: EntityName<object>,
  built: { sql: string; params: readonly unknown[] },
  source: string,
  sourceParams: readonly unknown[],
): { sql: string; params: unknown[] } {
  const table = (em.getMetadata(entity) as unknown as { tableName: string }).tableName;
  const root = ` from "${table}" as "e"`;
  const at = built.sql.indexOf(root);
  if (at < 0 || built.sql.slice(0, at).includes('?'))
    throw new Error(`lean: cannot put a source in place of ${table} in ${built.sql}`);
  return {
    sql: `${built.sql.slice(0, at)} from (${source}) as "e"${built.sql.slice(at + root.length)}`,
    params: [...sourceParams, ...built.params],
  };
}

function isTenantScoped(em: EntityManager, entity: EntityName<object>): boolean {
  return isTenantEntity((em.getMetadata(entity) as unknown as Meta).className);
}

/**
 * The row mapper of a shape: reads the result row `r` by column name, or by position when the
 * statement's `columns` are given (its rows are arrays).
 */
function mapPlan(em: EntityManager, meta: Meta, q: LeanQuery): (row: Row) => Row;
function mapPlan(
  em: EntityManager,
  meta: Meta,
  q: LeanQuery,
  columns: readonly string[],
): (row: unknown[]) => Row;
function mapPlan(em: EntityManager, meta: Meta, q: LeanQuery, columns?: readonly string[]) {
  const joins = q.joins ?? {};
  const column = (name: string) => {
    if (!columns) return `r[${JSON.stringify(name)}]`;
    const i = columns.indexOf(name);
    if (i < 0) throw new Error(`lean: the statement returns no column ${name}.`);
    return `r[${i}]`;
  };
  const parse = (text: string) => em.getPlatform().parseDate(text) as Date;
  const toIso = (v: unknown) =>
    v == null ? null : v instanceof Date ? v.toISOString() : pgTimestampToIso(v as string, parse);
  const key = JSON.stringify;
  // Each property's expression over the result row `r`.
  const readers = (m: Meta, fields: readonly string[], prefix: string) =>
    fields.map((f) => {
      const prop = (m.properties as Record<string, Prop>)[f];
      const col = column(prefix + prop.fieldNames[0]);
      if (prop.kind === ReferenceKind.MANY_TO_ONE) return `${key(f)}: ${col} == null ? null : { id: ${col} }`;
      // Points in time as ISO text, not a Date (see lib/timestamps.ts).
      if (prop.runtimeType === 'Date') return `${key(f)}: toIso(${col})`;
      return `${key(f)}: ${col}`;
    });
  const parts = readers(meta, rootFields(q), '');
  for (const [rel, fields] of Object.entries(joins)) {
    const target = (meta.properties as Record<string, Prop>)[rel].targetMeta as Meta;
    const prefix = `j_${rel}__`;
    const sub = readers(target, ['id', ...fields], prefix).join(', ');
    parts.push(`${key(rel)}: ${column(`${prefix}id`)} == null ? null : { ${sub} }`);
  }
  // One object literal per row: its shape is known at once, instead of growing a property at a
  // time (the growing copies were a third of what reading a page allocated, measured). The
  // source holds only property and column names from the entity metadata.
  return new Function('toIso', `return (r) => ({ ${parts.join(', ')} });`)(toIso);
}

/** For tests: whether the shape of this call runs as a prepared statement. */
export function isPrepared(em: EntityManager, entity: EntityName<object>, q: LeanQuery): boolean {
  const meta = em.getMetadata(entity) as unknown as Meta;
  const tenant = em.getFilterParams<{ clinicId?: number }>('tenant')?.clinicId;
  const key = shapeKey(meta.className, q, tenant !== undefined, []);
  return key !== null && shapes.get(key)?.statement != null;
}
