/**
 * A point in time as the presenters receive it: a Date from an entity, or already the ISO 8601
 * text from a lean row. Lean rows skip the Date: parsing PostgreSQL's text into a Date and
 * formatting it back was a tenth of a REST page's CPU.
 */
export type Timestamp = Date | string;

export const isoOf = (t: Timestamp): string => (typeof t === 'string' ? t : t.toISOString());

// PostgreSQL's text for a timestamptz in a UTC session: "2026-01-02 03:04:05.6+00".
const PG_UTC = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?\+00$/;

/**
 * PostgreSQL timestamptz text → the ISO text Date#toISOString gives for it (milliseconds,
 * always three digits, truncated like a Date). Other forms go through `parse`.
 */
export function pgTimestampToIso(text: string, parse: (text: string) => Date): string {
  // test() allocates no match array (this runs for every timestamp of every row read); the
  // parts are then at fixed positions: "YYYY-MM-DD HH:MM:SS[.ffffff]+00".
  if (!PG_UTC.test(text)) return parse(text).toISOString();
  const fraction = text.length - 3 - 20; // digits after the dot, -1 without one
  const ms =
    fraction <= 0 ? '000' : fraction >= 3 ? text.slice(20, 23) : text.slice(20, 20 + fraction).padEnd(3, '0');
  return `${text.slice(0, 10)}T${text.slice(11, 19)}.${ms}Z`;
}

/**
 * Every date and time the API takes (bodies, query parameters, GraphQL arguments) is read here
 * (docs/decisions.md: dates): a real calendar date (2026-02-30 is refused, never moved into
 * March) whose instant lies in [1900-01-01T00:00:00Z, 2201-01-01T00:00:00Z). The range keeps
 * every value far from what PostgreSQL and JavaScript cannot hold (year 0, year 10000: those were
 * 500s) and from what a clinic never means; a computed instant (start plus a duration) is held
 * to it with `inDateRange`.
 */
export const DATE_RANGE = { first: '1900-01-01', last: '2200-12-31' } as const;
const FIRST_MS = Date.UTC(1900, 0, 1);
const AFTER_LAST_MS = Date.UTC(2201, 0, 1);

export const inDateRange = (ms: number): boolean => ms >= FIRST_MS && ms < AFTER_LAST_MS;

/** What a date input may be: a date alone, a date-time with a zone, or either (a date is its midnight, UTC). */
export type DateForm = 'date' | 'date-time' | 'either';

// A date, then optionally a time with seconds optional, a fraction optional and a zone required.
const INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-](\d{2}):?(\d{2})))?$/;

const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();

export type DateReading = { date: Date; dateOnly: boolean } | { problem: 'form' | 'calendar' | 'range' };

/** Reads a date input; `problem` says what is wrong (the caller names the field). */
export function readDate(raw: string, form: DateForm): DateReading {
  const m = INSTANT.exec(raw);
  const dateOnly = m?.[4] === undefined;
  if (!m || (form === 'date' && !dateOnly) || (form === 'date-time' && dateOnly)) return { problem: 'form' };
  const [y, mo, d, h, mi, s, , oh, om] = m.slice(1).map((v) => (v === undefined ? 0 : Number(v)));
  if (h > 23 || mi > 59 || s > 59 || oh > 23 || om > 59) return { problem: 'form' };
  if (mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo)) return { problem: 'calendar' };
  // Outside the range the Date may be unusable (year 0): decide on the written year first.
  if (y < 1899 || y > 2201) return { problem: 'range' };
  const date = new Date(dateOnly ? `${raw}T00:00:00Z` : raw.replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
  if (Number.isNaN(date.getTime())) return { problem: 'form' };
  return inDateRange(date.getTime()) ? { date, dateOnly } : { problem: 'range' };
}

/** What is wrong with a date input, said of the field ("start " + this); `form` describes the accepted form. */
export function dateProblem(raw: string, problem: 'form' | 'calendar' | 'range', form: string): string {
  if (problem === 'calendar') return `is not a date on the calendar ('${raw.slice(0, 10)}')`;
  if (problem === 'range') return `must be from ${DATE_RANGE.first} to ${DATE_RANGE.last}`;
  return `must be ${form}`;
}

/**
 * An ISO 8601 instant from a query parameter or the CLI: `2026-01-02T03:04:05Z`, with an
 * offset, or a bare date (its midnight, UTC). A date-time without a zone is ambiguous and
 * refused. Null for anything `readDate` refuses.
 */
export function parseInstant(raw: string): Date | null {
  const r = readDate(raw, 'either');
  return 'date' in r ? r.date : null;
}
