import { DateTime, IANAZone } from 'luxon';

/**
 * Wall-clock times of a clinic's IANA zone ↔ instants, with Luxon (the zone rules come from
 * Node's ICU data; no offset arithmetic here). Working hours are wall-clock times, so each is
 * turned into an instant on each date: 09:00 is 09:00 local on both sides of a daylight-saving
 * change. Times the change makes odd are read as RFC 5545 (iCalendar) and Temporal's
 * `compatible` disambiguation read them (docs/decisions.md):
 * - one that does not exist (the spring-forward gap, 02:30 in Europe/Berlin on 2026-03-29) is
 *   moved forward by the length of the gap (03:30), which is Luxon's own reading;
 * - one that exists twice (the fall-back hour, 02:30 on 2026-10-25) is the earlier of the two
 *   (02:30+02:00), picked explicitly from Luxon's `getPossibleOffsets`.
 */
export interface LocalDate {
  year: number;
  month: number;
  day: number;
  /** ISO weekday: 1 = Monday … 7 = Sunday. */
  weekday: number;
}

export const MINUTES_PER_DAY = 1440;

/** The zone, or an error naming the clinic's misconfiguration (a 500: nothing the caller can fix). */
export function checkedZone(timezone: string): string {
  if (!IANAZone.isValidZone(timezone))
    throw new Error(`The clinic's time zone '${timezone}' is not an IANA time zone.`);
  return timezone;
}

const localOf = (dt: DateTime): LocalDate => ({
  year: dt.year,
  month: dt.month,
  day: dt.day,
  weekday: dt.weekday,
});

/** The clinic's calendar date at an instant. */
export const localDateAt = (zone: string, ms: number): LocalDate =>
  localOf(DateTime.fromMillis(ms, { zone }));

/** The next calendar date. */
export function nextDate(d: LocalDate): LocalDate {
  return localOf(DateTime.utc(d.year, d.month, d.day).plus({ days: 1 }));
}

/**
 * The instant at which the clinic's clock reads `minute` minutes after midnight on date `d`
 * (1440: midnight that ends the day, the next date's 00:00), disambiguated as above.
 */
export function instantAt(zone: string, d: LocalDate, minute: number): number {
  if (minute >= MINUTES_PER_DAY) return instantAt(zone, nextDate(d), minute - MINUTES_PER_DAY);
  const dt = DateTime.fromObject(
    { year: d.year, month: d.month, day: d.day, hour: Math.floor(minute / 60), minute: minute % 60 },
    { zone },
  );
  return Math.min(...dt.getPossibleOffsets().map((x) => x.toMillis()));
}

/** The clinic's midnight starting a date given as YYYY-MM-DD (its first instant, gap or not). */
export function midnightOf(zone: string, date: string): number {
  const [year, month, day] = date.split('-').map(Number);
  return instantAt(zone, { year, month, day, weekday: 0 }, 0);
}

/** `ms` plus `days` calendar days of the clinic (a day across a change is 23 or 25 hours). */
export const plusDays = (zone: string, ms: number, days: number): number =>
  DateTime.fromMillis(ms, { zone }).plus({ days }).toMillis();
