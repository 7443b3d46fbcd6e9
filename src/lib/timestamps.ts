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

// A date, or a date and time with seconds optional, fraction optional and a zone required.
const INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2}))?$/;

/**
 * An ISO 8601 instant from a query parameter: `2026-01-02T03:04:05Z`, with an offset, or a bare
 * date (its midnight, UTC). A date-time without a zone is ambiguous and refused, as is anything
 * PostgreSQL and JavaScript cannot both hold. Returns null for anything not of that form.
 */
export function parseInstant(raw: string): Date | null {
  const m = INSTANT.exec(raw);
  if (!m) return null;
  const [, y, mo, d, h, mi, s] = m;
  if (
    +mo < 1 ||
    +mo > 12 ||
    +d < 1 ||
    +d > 31 ||
    (h !== undefined && (+h > 23 || +mi > 59 || +(s ?? 0) > 59))
  )
    return null;
  const date = new Date(
    m[4] === undefined ? `${raw}T00:00:00Z` : raw.replace(/([+-]\d{2})(\d{2})$/, '$1:$2'),
  );
  if (Number.isNaN(date.getTime())) return null;
  // Rolled-over days (February 30th) are refused, not moved into March.
  if (m[4] === undefined && date.toISOString().slice(0, 10) !== raw) return null;
  const year = date.getUTCFullYear();
  return year >= 1 && year <= 9999 && +y >= 1 ? date : null;
}
