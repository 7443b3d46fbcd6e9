import { AppError } from './errors.ts';
import { currentRequest } from './request-context.ts';

/**
 * The time and size budgets of the current request, checked by the one read path
 * (src/db/lean.ts) around every statement:
 * - once the request is aborted (its deadline passed, or its client went away), no further
 *   statement starts: its work stops at the next read, whatever resolver asked for it;
 * - the rows a request has read are counted, roughly in bytes of JSON; past the response cap the
 *   request is refused before its response is built.
 */
export function checkNotAborted(): void {
  const req = currentRequest();
  if (req?.abortedBy) throw req.abortedBy;
}

export function chargeRows(rows: readonly Record<string, unknown>[]): void;
/** Rows as arrays, in the order of `columns`. */
export function chargeRows(rows: readonly unknown[][], columns: readonly string[]): void;
export function chargeRows(
  rows: readonly (Record<string, unknown> | unknown[])[],
  columns?: readonly string[],
): void {
  const req = currentRequest();
  if (!req?.readBudget || rows.length === 0) return;
  // The rows of a statement share their columns: names are counted once, then only strings are
  // measured (about 5 µs for a page of 25 patients).
  const names = columns ?? Object.keys(rows[0]);
  let perRow = 0;
  for (const k of names) perRow += k.length + 8;
  let bytes = perRow * rows.length;
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r];
    if (Array.isArray(row)) for (let i = 0; i < row.length; i++) bytes += valueBytes(row[i]);
    else for (let i = 0; i < names.length; i++) bytes += valueBytes(row[names[i]]);
  }
  const budget = req.readBudget;
  budget.bytes += bytes;
  if (budget.bytes > budget.max) {
    throw new AppError(
      'response_too_large',
      `This response would exceed ${budget.max} bytes. Ask for fewer records (a smaller limit or first) or fewer fields.`,
    );
  }
}

/** Beyond the per-column allowance: a string's length, a rough size for an object (a JSON column). */
const valueBytes = (v: unknown): number =>
  typeof v === 'string' ? v.length : v !== null && typeof v === 'object' ? 64 : 0;

/**
 * Runs a read of a streaming operation (a subscription's replay, a page at a time) against the
 * response cap on its own: a subscription lives for hours and its client reads what it is handed
 * before the next page is read, so the cap bounds what one read brings in, not all it ever read.
 * The operation's own count is as it was afterwards. Its reads must not overlap (a replay's do not).
 */
export async function readAsOneResult<T>(read: () => Promise<T>): Promise<T> {
  const req = currentRequest();
  const outer = req?.readBudget;
  if (!req || !outer) return read();
  req.readBudget = { bytes: 0, max: outer.max };
  try {
    return await read();
  } finally {
    req.readBudget = outer;
  }
}
