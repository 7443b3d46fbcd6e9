import { runNamed, statementOf } from '../../db/named-statements.ts';
import { invalid } from '../../lib/errors.ts';
import { checkedZone, instantAt, localDateAt } from '../availability/clinic-time.ts';
import type { WriteContext } from '../writes.ts';

/**
 * What a booking needs of the clinic's settings, in one statement (docs/decisions.md:
 * appointments): the status a new appointment starts with, and the provider's working week with
 * the clinic's time zone.
 *
 * - Default status: the first of the clinic's appointment statuses in their configured order
 *   (the catalog's order, by id) that staff can pick (`enabled`) and that is not retired; the
 *   demo's and a new clinic's first is "Scheduled". None such: null, as before.
 * - Working hours: a booking lies inside one of the provider's intervals at the booking's
 *   branch, on the clinic's calendar date it starts (what GET /v1/availability offers, less its
 *   15-minute grid), else a 422 naming `start`. `outside_hours: true` is the staff override (an
 *   emergency on a closed day). A provider with no working hours at all keeps no schedule here:
 *   any time is taken, as before working hours existed.
 */
export const BOOKING_RULES_SQL =
  'select (select s."id" from "appointment_status" s where s."clinic_id" = ? and s."enabled" and s."disabled_at" is null order by s."id" limit 1) as "default_status", (select c."timezone" from "clinic" c where c."id" = ?) as "timezone", (select json_agg(json_build_array(h."branch_id", h."weekday", h."start_minute", h."end_minute")) from "working_hours" h where h."clinic_id" = ? and h."provider_id" = ?) as "hours"';

export interface BookingRules {
  defaultStatus: number | null;
  timezone: string;
  /** [branch, ISO weekday, start minute, end minute]; null when the provider has none. */
  hours: [number, number, number, number][] | null;
}

export async function bookingRules(w: WriteContext, providerId: number): Promise<BookingRules> {
  const { rows } = await runNamed(w.em, statementOf(BOOKING_RULES_SQL), [
    w.clinicId,
    w.clinicId,
    w.clinicId,
    providerId,
  ]);
  const r = rows[0] as { default_status: number | null; timezone: string; hours: BookingRules['hours'] };
  return { defaultStatus: r.default_status, timezone: r.timezone, hours: r.hours };
}

/** Refuses a booking outside the provider's working hours at its branch, unless staff override it. */
export function checkWorkingHours(
  rules: BookingRules,
  b: { branch: number; startAt: Date; endAt: Date },
  override: boolean | undefined,
): void {
  if (override || !rules.hours?.length) return;
  const zone = checkedZone(rules.timezone);
  const start = b.startAt.getTime();
  const end = b.endAt.getTime();
  const day = localDateAt(zone, start);
  const inside = rules.hours.some(
    ([branch, weekday, from, to]) =>
      branch === b.branch &&
      weekday === day.weekday &&
      instantAt(zone, day, from) <= start &&
      end <= instantAt(zone, day, to),
  );
  if (!inside)
    throw invalid(
      'start',
      'start: the provider does not work at that branch at that time (see GET /v1/availability); staff may book it anyway with outside_hours: true.',
    );
}
