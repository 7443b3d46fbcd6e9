import { AppError } from '../lib/errors.ts';
import { type IdKind, prefixes, tryParseId } from '../lib/ids.ts';
import { toE164 } from '../lib/phone.ts';
import { dateProblem, readDate } from '../lib/timestamps.ts';

/**
 * List filters (query parameters), checked once for REST and GraphQL alike: a bad value of any
 * is a 422 naming it. REST hands over strings, GraphQL typed values; both are accepted.
 */
const invalid = (param: string, message: string) => new AppError('validation_failed', message, { param });

const given = (v: unknown): v is NonNullable<unknown> => v !== undefined && v !== null && v !== '';

export function phoneParam(raw: unknown, country: string, param = 'phone'): string | undefined {
  if (!given(raw)) return undefined;
  const e164 = typeof raw === 'string' && !raw.includes('\u0000') ? toE164(raw, country) : null;
  if (!e164) throw invalid(param, `${param} '${String(raw)}' is not a phone number.`);
  return e164;
}

const WHEN = 'an ISO 8601 date-time with a time zone (2026-01-02T09:30:00Z) or a date (2026-01-02)';

/**
 * A date filter: a date-time with a zone or a date, through the one date check (a real calendar
 * date from 1900-01-01 to 2200-12-31, src/lib/timestamps.ts). `form` describes it in the error.
 */
export function dateParam(
  raw: unknown,
  param: string,
  form = WHEN,
): { date: Date; dateOnly: boolean } | undefined {
  if (!given(raw)) return undefined;
  const r = typeof raw === 'string' ? readDate(raw, 'either') : ({ problem: 'form' } as const);
  if ('date' in r) return r;
  throw invalid(param, `${param} ${dateProblem(String(raw), r.problem, form)}.`);
}

export function instantParam(raw: unknown, param: string): Date | undefined {
  return dateParam(raw, param)?.date;
}

export function booleanParam(raw: unknown, param: string): boolean | undefined {
  if (!given(raw)) return undefined;
  if (raw === true || raw === 'true') return true;
  if (raw === false || raw === 'false') return false;
  throw invalid(param, `${param} must be true or false.`);
}

export function enumParam<T extends string>(
  raw: unknown,
  param: string,
  values: readonly T[],
): T | undefined {
  if (!given(raw)) return undefined;
  if (typeof raw === 'string' && (values as readonly string[]).includes(raw)) return raw as T;
  throw invalid(param, `${param} must be one of ${values.join(', ')}.`);
}

/** An id filter (`branch_id=br_2`): a malformed id is a 422, an unknown one an empty page. */
export function idParam(raw: unknown, kind: IdKind, param: string): number | undefined {
  if (!given(raw)) return undefined;
  const n = typeof raw === 'string' ? tryParseId(kind, raw) : null;
  if (n == null) throw invalid(param, `${param} '${String(raw)}' is not a ${prefixes[kind]}_… id.`);
  return n;
}
