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

export function chargeRows(rows: readonly Record<string, unknown>[]): void {
  const req = currentRequest();
  if (!req?.readBudget || rows.length === 0) return;
  // The rows of a statement share their columns: names are counted once, then only strings are
  // measured (about 5 µs for a page of 25 patients).
  const keys = Object.keys(rows[0]);
  let perRow = 0;
  for (const k of keys) perRow += k.length + 8;
  let bytes = perRow * rows.length;
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r];
    for (let i = 0; i < keys.length; i++) {
      const v = row[keys[i]];
      if (typeof v === 'string') bytes += v.length;
      else if (v !== null && typeof v === 'object') bytes += 64;
    }
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
