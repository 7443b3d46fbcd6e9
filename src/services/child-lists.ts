import {
  firstOfParents,
  type ListPage,
  mapPage,
  type PageArgs,
  readPage,
  type SqlCondition,
} from '../db/list.ts';
import { encodeCursor, type KeysetSpec } from '../db/pagination.ts';
import { entityNamed } from '../entities/index.ts';
import { loader, type RequestContext, readsOf, type ServiceContext } from '../lib/request-context.ts';
import type { Resource, Row, View } from './resource.ts';

/**
 * A list of records that belong to a parent record (a patient's appointments, treatments,
 * payments). Its rows carry the parent only as `{id}`: the caller has the parent already and
 * attaches its presented form to every item.
 */
export interface ChildList {
  /** The records' definition; its kind names their entity. */
  resource: Resource;
  keyset: KeysetSpec<Row>;
  /**
   * The to-one relation to the parent, and the resource field that shows it: the definition must
   * name the field as the relation (`patient: f.join('patient', …, { fromParent: true })`).
   */
  parent: string;
  /** The list's filter arguments → equalities on columns (a bad value is a 422). */
  filters?: (args: Record<string, unknown>) => Record<string, number>;
  /**
   * The rows the request's key may see, when it may not see them all (a condition on the rows,
   * alias `e`); null: every row. Applied to every page and before the first page's window.
   */
  visible?: (ctx: Pick<ServiceContext, 'principal'>) => SqlCondition | null;
}

/** Newest first by a point in time (`prop`), ties by id: a patient's appointments, treatments, payments. */
export function newestFirst(tag: string, prop: string): KeysetSpec<Row> {
  return {
    tag,
    sortBy: { prop, kind: 'date', dir: 'desc', get: (r) => r[prop] },
    idDir: 'desc',
    id: (r) => r.id,
  };
}

/** Oldest first by a point in time, ties by id ascending (a sync order, a short list's order). */
export function oldestFirst(tag: string, prop: string): KeysetSpec<Row> {
  return {
    tag,
    sortBy: { prop, kind: 'date', dir: 'asc', get: (r) => r[prop] },
    idDir: 'asc',
    id: (r) => r.id,
  };
}

/** One page of one parent's list. `filters` are equalities on columns (e.g. `appointment`). */
export async function pageOfParent(
  ctx: ServiceContext,
  list: ChildList,
  parentId: number,
  parent: Row,
  view: View,
  filters: Record<string, number>,
  args: PageArgs,
): Promise<ListPage<Row>> {
  const where = [{ [list.parent]: parentId, ...filters }];
  const page = await readPage(
    readsOf(ctx),
    entityNamed(list.resource.kind),
    list.keyset,
    view.read,
    where,
    args,
    undefined,
    list.visible?.(ctx) ?? undefined,
  );
  return mapPage(page, (row) => withParent(view.present(row, ctx.principal), list, parent));
}

function withParent(item: Row, list: ChildList, parent: Row): Row {
  item[list.parent] = parent;
  return item;
}

/**
 * The first page of this list for `parentId`, batched with every other parent of the request
 * that asks for the same page size, view and filters: a page of parents costs one statement.
 */
export async function firstPageOfParent(
  ctx: Pick<RequestContext, 'em' | 'principal' | 'loaders'>,
  list: ChildList,
  parentId: number,
  parent: Row,
  view: View,
  filters: Record<string, number>,
  args: { limit: number },
): Promise<ListPage<Row>> {
  const n = args.limit + 1;
  const filterKey = Object.keys(filters).length ? JSON.stringify(filters) : '';
  const visible = list.visible?.(ctx) ?? undefined;
  const visibleKey = visible ? JSON.stringify(visible) : '';
  const name = `first:${list.keyset.tag}:${n}:${view.key}:${filterKey}:${visibleKey}`;
  const rows = await loader<number, Row[]>(ctx, name, (ids) =>
    firstOfParents(
      readsOf(ctx),
      entityNamed(list.resource.kind),
      list.keyset,
      list.parent,
      view.read,
      ids,
      n,
      filters,
      visible,
    ),
  ).load(parentId);
  return firstPageOfRows(ctx, list, rows, parent, view, args.limit);
}

/**
 * The first pages of many parents' lists at once, for a list of parents that plans its items'
 * lists before they resolve (src/schema/child-pages.ts): one statement, as the batched loader's.
 */
export async function firstPagesOfParents(
  ctx: Pick<RequestContext, 'em' | 'principal'>,
  list: ChildList,
  parents: readonly { id: number; row: Row }[],
  view: View,
  filters: Record<string, number>,
  limit: number,
): Promise<ListPage<Row>[]> {
  const rows = await firstOfParents(
    readsOf(ctx),
    entityNamed(list.resource.kind),
    list.keyset,
    list.parent,
    view.read,
    parents.map((p) => p.id),
    limit + 1,
    filters,
    list.visible?.(ctx) ?? undefined,
  );
  return parents.map((p, i) => firstPageOfRows(ctx, list, rows[i], p.row, view, limit));
}

/** A first page from up to `limit + 1` rows (one more: whether there is a next page). */
function firstPageOfRows(
  ctx: Pick<RequestContext, 'principal'>,
  list: ChildList,
  rows: Row[],
  parent: Row,
  view: View,
  limit: number,
): ListPage<Row> {
  return firstPageOf(list.keyset, rows, limit, (row) =>
    withParent(view.present(row, ctx.principal), list, parent),
  );
}

/**
 * A first page of `keyset`'s order from up to `limit + 1` rows read for it (one more tells
 * whether another page exists), its items presented by `present`, its cursors from the rows.
 */
export function firstPageOf(
  keyset: KeysetSpec<Row>,
  rows: readonly Row[],
  limit: number,
  present: (row: Row) => Row,
): ListPage<Row> {
  const rowsOfPage = rows.length > limit ? rows.slice(0, limit) : rows;
  const cursorAt = (i: number) => encodeCursor(keyset, rowsOfPage[i]);
  return {
    items: rowsOfPage.map(present),
    nextCursor: rows.length > limit ? cursorAt(rowsOfPage.length - 1) : null,
    cursorAt,
  };
}

/** A page with no items (a parent without the key its list hangs on: a patient without a phone). */
export const emptyPage = (): ListPage<Row> => ({ items: [], nextCursor: null, cursorAt: () => '' });
