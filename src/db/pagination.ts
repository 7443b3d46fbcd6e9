import { AppError } from '../lib/errors.ts';
import { cached } from '../lib/memo.ts';

/**
 * Keyset pagination, the one helper behind every list: `{data, next_cursor}` pages in REST and
 * Relay connections in GraphQL. A cursor is base64url JSON `[listTag, ...sortValues, id]` of the
 * last row returned; the next page starts strictly after it, so inserts and deletes between
 * fetches neither skip nor repeat rows.
 *
 * A sort key may be nullable: its NULLs sort last in both directions (ties, NULLs included, by
 * id), and a cursor on such a row carries `null` as its sort value.
 */
export const DEFAULT_LIMIT = 25;
export const MAX_LIMIT = 100;

export type SortDir = 'asc' | 'desc';
export type SortKind = 'date' | 'number' | 'string';
/** An `orderBy` direction: a nullable sort key orders with its NULLs last (MikroORM's QueryOrder). */
export type OrderDir = SortDir | 'asc nulls last' | 'desc nulls last';
export type SortValue = Date | number | string | null;

export interface KeysetSpec<T> {
  /** Names the list a cursor belongs to; a cursor from another list is refused. */
  tag: string;
  /**
   * The sort column (an entity property holding a Date, number or string), then the id. With
   * `nullable`, the column may be NULL: those rows come last whatever `dir` is.
   */
  sortBy?: { prop: string; kind: SortKind; dir: SortDir; nullable?: boolean; get: (row: T) => SortValue };
  idDir: SortDir;
  id: (row: T) => number;
}

export interface PageRequest {
  limit: number;
  after: unknown[] | null;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export function parseLimit(raw: unknown, param = 'limit'): number {
  if (raw === undefined || raw === null || raw === '') return DEFAULT_LIMIT;
  const s = typeof raw === 'number' ? String(raw) : raw;
  // No trimming: `limit=+5` arrives as " 5" and is refused like any other non-number.
  if (typeof s !== 'string' || !/^\d+$/.test(s)) {
    throw new AppError('validation_failed', `${param} must be an integer from 1 to ${MAX_LIMIT}.`, { param });
  }
  const n = Number(s);
  if (n < 1 || n > MAX_LIMIT) {
    throw new AppError('validation_failed', `${param} must be an integer from 1 to ${MAX_LIMIT}.`, { param });
  }
  return n;
}

function badCursor(param: string): AppError {
  return new AppError(
    'validation_failed',
    `${param} is not a cursor of this list; pass next_cursor back verbatim.`,
    {
      param,
    },
  );
}

export function encodeCursor<T>(spec: KeysetSpec<T>, row: T): string {
  const values: unknown[] = [spec.tag];
  if (spec.sortBy) {
    const v = spec.sortBy.get(row);
    values.push(v == null ? null : v instanceof Date ? v.toISOString() : v);
  }
  values.push(spec.id(row));
  return Buffer.from(JSON.stringify(values)).toString('base64url');
}

export function decodeCursor<T>(spec: KeysetSpec<T>, raw: unknown, param = 'cursor'): unknown[] | null {
  if (raw === undefined || raw === null || raw === '') return null;
  if (typeof raw !== 'string' || raw.length > 512 || !/^[A-Za-z0-9_-]+$/.test(raw)) throw badCursor(param);
  let values: unknown;
  try {
    values = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw badCursor(param);
  }
  const expected = spec.sortBy ? 3 : 2;
  if (!Array.isArray(values) || values.length !== expected || values[0] !== spec.tag) throw badCursor(param);
  const id = values[expected - 1];
  // Ids are PostgreSQL integers: a larger one never reaches a query as a value of the wrong type.
  if (!Number.isSafeInteger(id) || (id as number) < 0 || (id as number) > 2_147_483_647)
    throw badCursor(param);
  const out: unknown[] = [];
  if (spec.sortBy) {
    const v = values[1] === null && spec.sortBy.nullable ? null : parseSortValue(spec.sortBy.kind, values[1]);
    if (v === undefined) throw badCursor(param);
    out.push(v);
  }
  out.push(id);
  return out;
}

/**
 * A cursor's sort value, checked against the kind the list sorts by, so an edited cursor is a 422
 * and never reaches PostgreSQL as a value of the wrong type. Dates must be in the exact form
 * encodeCursor writes and within the years PostgreSQL and JavaScript both represent.
 */
function parseSortValue(kind: SortKind, v: unknown): Date | number | string | undefined {
  if (kind === 'number') return Number.isFinite(v) ? (v as number) : undefined;
  if (typeof v !== 'string' || v.length > 64) return undefined;
  if (kind === 'string') return v;
  const d = new Date(v);
  if (Number.isNaN(d.getTime()) || d.toISOString() !== v) return undefined;
  const year = d.getUTCFullYear();
  return year >= 1 && year <= 9999 ? d : undefined;
}

/**
 * The MikroORM condition "strictly after the cursor" for this keyset. For a nullable key (NULLs
 * last): after a value, the greater (or lesser) values, its ties with a later id, and every NULL;
 * after a NULL, only the NULLs with a later id.
 */
export function afterCondition<T>(spec: KeysetSpec<T>, after: unknown[]): Record<string, unknown> {
  const op = (dir: SortDir) => (dir === 'asc' ? '$gt' : '$lt');
  if (!spec.sortBy) return { id: { [op(spec.idDir)]: after[0] } };
  const { prop, dir, nullable } = spec.sortBy;
  const [v, id] = after;
  if (nullable && v === null) return { [prop]: null, id: { [op(spec.idDir)]: id } };
  const or: Record<string, unknown>[] = [
    { [prop]: { [op(dir)]: v } },
    { [prop]: v, id: { [op(spec.idDir)]: id } },
  ];
  if (nullable) or.push({ [prop]: null });
  return { $or: or };
}

/** The order of a keyset's list: one frozen value per keyset (src/db/lean.ts memoises frozen parts of a query). */
export function orderBy<T>(spec: KeysetSpec<T>): readonly Record<string, OrderDir>[] {
  return cached(orders, spec, () => {
    if (!spec.sortBy) return Object.freeze([Object.freeze({ id: spec.idDir })]);
    const { prop, dir, nullable } = spec.sortBy;
    return Object.freeze([
      Object.freeze({ [prop]: nullable ? (`${dir} nulls last` as OrderDir) : dir }),
      Object.freeze({ id: spec.idDir }),
    ]);
  });
}

const orders = new WeakMap<object, readonly Record<string, OrderDir>[]>();

/**
 * Runs one page: `fetch` receives the extra condition, order and row count (limit + 1, the extra
 * row only tells whether another page exists).
 */
export async function paginate<T>(
  spec: KeysetSpec<T>,
  args: { limit?: unknown; cursor?: unknown; limitParam?: string; cursorParam?: string },
  fetch: (q: {
    after: Record<string, unknown> | null;
    orderBy: readonly Record<string, OrderDir>[];
    take: number;
  }) => Promise<T[]>,
): Promise<Page<T>> {
  const limit = parseLimit(args.limit, args.limitParam);
  const after = decodeCursor(spec, args.cursor, args.cursorParam);
  const rows = await fetch({
    after: after ? afterCondition(spec, after) : null,
    orderBy: orderBy(spec),
    take: limit + 1,
  });
  const items = rows.length > limit ? rows.slice(0, limit) : rows;
  const nextCursor = rows.length > limit ? encodeCursor(spec, items[items.length - 1]) : null;
  return { items, nextCursor };
}
