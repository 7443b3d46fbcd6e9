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
  const m = PG_UTC.exec(text);
  if (!m) return parse(text).toISOString();
  const ms = m[3] === undefined ? '000' : m[3].length >= 3 ? m[3].slice(0, 3) : m[3].padEnd(3, '0');
  return `${m[1]}T${m[2]}.${ms}Z`;
}
