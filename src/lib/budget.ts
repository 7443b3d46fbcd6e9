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
  if (!req?.readBudget) return;
  let bytes = 0;
  for (const row of rows) {
    for (const key in row) {
      const v = row[key];
      bytes +=
        key.length + (typeof v === 'string' ? v.length + 4 : v !== null && typeof v === 'object' ? 64 : 8);
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
