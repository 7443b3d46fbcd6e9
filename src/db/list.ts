import type { EntityManager, EntityName } from '@mikro-orm/postgresql';
import type pg from 'pg';
import { cached } from '../lib/memo.ts';
import { leanFind } from './lean.ts';
import { afterCondition, encodeCursor, type KeysetSpec, orderBy, paginate } from './pagination.ts';

/**
 * The one list mechanism. Every list reads plain rows through `leanFind` (the QueryBuilder with
 * the tenant filter, each query shape prepared once and run as a named statement), then the
 * service presents them with its resource's presenter. A `ListPage` serves a REST page
 * (`{data, next_cursor}`) and a Relay connection alike.
 */
type Row = Record<string, any>;

/** What to read: root columns, and to-one relations to join with their columns. */
export interface Read {
  fields: readonly string[];
  joins: Record<string, readonly string[]>;
}

export interface ListPage<T> {
  items: T[];
  nextCursor: string | null;
  /** The cursor of the i-th item (Relay edges), computed only when asked for. */
  cursorAt(i: number): string;
}

export interface PageArgs {
  limit?: unknown;
  cursor?: unknown;
  /** The names of the page-size and cursor parameters in 422s (GraphQL: first, after). */
  limitParam?: string;
  cursorParam?: string;
}

/** A Relay connection's `first`/`after`, named as such in 422s. */
export const relayPageArgs = (args: { first?: number | null; after?: string | null }): PageArgs => ({
  limit: args.first ?? undefined,
  cursor: args.after ?? undefined,
  limitParam: 'first',
  cursorParam: 'after',
});

/** An SQL condition on a list's rows (alias `e`), with `?` placeholders. */
export interface SqlCondition {
  sql: string;
  params: readonly (string | number)[];
}

/** Both conditions (either may be absent). */
const bothSql = (a?: SqlCondition, b?: SqlCondition): SqlCondition | undefined =>
  a && b ? { sql: `(${a.sql}) and (${b.sql})`, params: [...a.params, ...b.params] } : (a ?? b);

/** One keyset page of `entity` under `where` (a list of conditions, ANDed). */
export async function readPage(
  em: EntityManager,
  entity: EntityName<object>,
  keyset: KeysetSpec<Row>,
  read: Read,
  where: readonly object[],
  args: PageArgs,
  /** An extra SQL condition on the first page only (a start the cursor gives later pages). */
  firstPageSql?: SqlCondition,
  /** An extra SQL condition on every page (one the QueryBuilder's `where` cannot say, a subquery). */
  rowSql?: SqlCondition,
): Promise<ListPage<Row>> {
  const withKey = sortKeyRead(read, keyset);
  const page = await paginate(keyset, args, ({ after, orderBy, take }) => {
    const and = after ? [...where, after] : where;
    const whereSql = bothSql(after ? undefined : firstPageSql, rowSql);
    return leanFind<Row>(em, entity, {
      ...withKey,
      where: and.length ? { $and: and } : undefined,
      ...(whereSql ? { whereSql } : {}),
      orderBy,
      limit: take,
    });
  });
  return { ...page, cursorAt: (i) => encodeCursor(keyset, page.items[i]) };
}

const withSortKey = new WeakMap<Read, Read>();

/**
 * `read`, plus the list's sort column: cursors are made of it, whether or not the caller
 * presents it (a GraphQL page that selects no time field still pages by it).
 */
function sortKeyRead(read: Read, keyset: KeysetSpec<Row>): Read {
  const prop = keyset.sortBy?.prop;
  if (!prop || read.fields.includes(prop)) return read;
  return cached(withSortKey, read, () =>
    Object.freeze({ ...read, fields: Object.freeze([...read.fields, prop]) }),
  );
}

/** Ascending id alone: the keyset of reading on from the last id read. */
const byId: KeysetSpec<Row> = Object.freeze({ tag: 'id', idDir: 'asc', id: (r: Row) => r.id as number });

/**
 * The service's own page of a table it reads on through (the events replay and relay,
 * src/services/events/): at most `limit` rows after `afterId`, ascending id, under `where`. The
 * keyset of a list on id, read as every list reads (its budget, its prepared statement); the
 * cursor is the last id read, kept by the caller, never a client's, so no cursor is encoded and
 * the limit is the caller's, not a client's.
 */
export function readAfterId(
  em: EntityManager,
  entity: EntityName<object>,
  read: Read,
  where: readonly object[],
  afterId: number,
  limit: number,
  opts: { allClinics?: true; on?: pg.ClientBase } = {},
): Promise<Row[]> {
  return leanFind<Row>(
    em,
    entity,
    {
      ...read,
      where: { $and: [...where, afterCondition(byId, [afterId])] },
      orderBy: orderBy(byId),
      limit,
      ...(opts.allClinics ? { allClinics: true } : {}),
    },
    opts.on,
  );
}

/** Presents a page's rows, keeping the cursors (which come from the rows' sort values). */
export function mapPage<A, B>(page: ListPage<A>, f: (a: A) => B): ListPage<B> {
  return { items: page.items.map(f), nextCursor: page.nextCursor, cursorAt: page.cursorAt };
}

/** A bounded list: every row, in order (catalog). */
export function readAll(
  em: EntityManager,
  entity: EntityName<object>,
  read: Read,
  where: object | undefined,
  orderBy: object[],
): Promise<Row[]> {
  return leanFind<Row>(em, entity, { ...read, where, orderBy });
}

/** A PostgreSQL text[] literal: one parameter, so any number of values is the same statement. */
export const textArray = (values: readonly string[]): string =>
  `{${values.map((v) => `"${NEEDS_ESCAPE.test(v) ? v.replace(/["\\]/g, '\\$&') : v}"`).join(',')}}`;

const NEEDS_ESCAPE = /["\\]/;

/** One array parameter, so a batch of any size is the same statement (`in (?, ?, …)` is one per size). */
const idsIn = (ids: readonly number[]) => ({ sql: 'e.id = any(?::int[])', params: [`{${ids.join(',')}}`] });

/** Rows by id, in the order of `ids` (null where the clinic has none): DataLoader batches, single reads. */
export async function readByIds(
  em: EntityManager,
  entity: EntityName<object>,
  read: Read,
  ids: readonly number[],
): Promise<(Row | null)[]> {
  const rows = await leanFind<Row>(em, entity, { ...read, whereSql: idsIn(ids) });
  const byId = new Map(rows.map((r) => [r.id as number, r]));
  return ids.map((id) => byId.get(id) ?? null);
}

/**
 * The first `n` rows of many parents' lists (the first page of a nested GraphQL connection for a
 * whole page of parents) in one statement: for each parent, a `limit n` read in the list's order
 * (`lateral`, so each parent's rows come off its index: cheaper than ranking every row of the
 * parents with a window, which read each chosen row twice; docs/performance.md), then the joins.
 * `parent` is the to-one relation to the parent; each row carries it as `{id}` (the caller has
 * the parent already). The rows are aliased `e`, as readPage's are, so one `rowSql` means the
 * same in both.
 */
export async function firstOfParents(
  em: EntityManager,
  entity: EntityName<object>,
  keyset: KeysetSpec<Row>,
  parent: string,
  read: Read,
  /** The parents' ids (a to-one relation), or the values of a text column the rows share with them. */
  parentIds: readonly number[] | readonly string[],
  n: number,
  /** Equalities on columns of the rows (e.g. a filter argument), applied before the window. */
  filters: Record<string, number> = {},
  /** A condition on the rows (alias `e`, as readPage's `rowSql`), applied before the window too. */
  rowSql?: SqlCondition,
): Promise<Row[][]> {
  const meta = em.getMetadata(entity) as unknown as {
    tableName: string;
    properties: Record<string, { fieldNames: string[] }>;
  };
  const col = (prop: string) => `"${meta.properties[prop].fieldNames[0]}"`;
  const byText = typeof parentIds[0] === 'string';
  // Each parent once: the lateral reads per element, so a parent named twice would read twice.
  const unique = [...new Set<number | string>(parentIds)];
  const window = windowOrder(keyset, col);
  const extra =
    Object.keys(filters)
      .map((prop) => ` and ${col(prop)} = ?`)
      .join('') + (rowSql ? ` and (${rowSql.sql})` : '');
  const tenant = em.getFilterParams<{ clinicId?: number }>('tenant')?.clinicId;
  if (tenant === undefined) throw new Error('firstOfParents needs a clinic-bound EntityManager.');
  const rows = await leanFind<Row>(em, entity, {
    fields: [...sortKeyRead(read, keyset).fields.filter((f) => f !== parent), parent],
    joins: read.joins,
    from: {
      sql: `select "e".* from unnest(?::${byText ? 'text' : 'int'}[]) as "p"("id") cross join lateral (
              select * from "${meta.tableName}" as "e" where "clinic_id" = ? and ${col(parent)} = "p"."id"${extra}
              order by ${window} limit ?) as "e"`,
      params: [
        byText ? textArray(unique as string[]) : `{${unique.join(',')}}`,
        tenant,
        ...Object.values(filters),
        ...(rowSql?.params ?? []),
        n,
      ],
    },
    orderBy: orderBy(keyset),
  });
  const byParent = new Map<number | string, Row[]>();
  for (const r of rows) {
    const id = byText ? (r[parent] as string) : (r[parent].id as number);
    const list = byParent.get(id);
    if (list) list.push(r);
    else byParent.set(id, [r]);
  }
  return parentIds.map((id) => byParent.get(id) ?? []);
}

function windowOrder(keyset: KeysetSpec<Row>, col: (prop: string) => string): string {
  const s = keyset.sortBy;
  const nulls = s?.nullable ? ' nulls last' : '';
  const sort = s ? `${col(s.prop)} ${s.dir}${nulls}, ` : '';
  return `${sort}"id" ${keyset.idDir}`;
}
