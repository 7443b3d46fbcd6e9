/**
 * The statements of a booking (POST /v1/appointments) that bench/raw-server.ts runs exactly as the
 * app runs them (`?` placeholders, MikroORM's text): test/bench-sql.test.ts fails when the app's
 * change and these are not updated with them: the raw server runs every statement of the app's
 * booking, only without the ORM around them.
 */
import { readFileSync } from 'node:fs';
import { OVERLAP_SQL } from '../src/services/appointments/appointment-writes.ts';
import { BOOKING_RULES_SQL } from '../src/services/appointments/booking-rules.ts';
import { insertEventsSql } from '../src/services/unit-of-work.ts';
import { eventDeliveries } from '../src/services/webhooks/event-deliveries.ts';

/** A statement the app builds from its definitions, as `npm run bench:pins` last wrote it. */
const pin = (name: string) => readFileSync(new URL(`./pins/${name}`, import.meta.url), 'utf8');

export const bookingSql = {
  /** The provider's active booking in the way, found through the exclusion constraint's index: params clinic, provider, start, end, the appointment itself (0 for a new one). */
  overlap: OVERLAP_SQL,
  /** The clinic's default status, its time zone and the provider's working week: params clinic, clinic, clinic, provider. */
  bookingRules: BOOKING_RULES_SQL,
  /**
   * The app builds these two from the Appointment entity and definition (src/db/insert-row.ts,
   * the detailed view), so a column added there changes them: they are pinned in bench/pins/,
   * written by `npm run bench:pins` from the statements the app runs (test/bench-sql.test.ts,
   * which fails until they are). The raw server gives a column it has no value for null.
   */
  insertAppointment: pin('insert-appointment.sql'),
  /** The appointment as GET answers it (detailed), read through the write's transaction: params an int[] literal, clinic. */
  detailed: pin('appointment-detailed.sql'),
  /**
   * The outbox row and the clinic's subscriptions it is for (the app queues their deliveries in
   * the same transaction; the bench's clinic has none): params clinic, type, scope, data (JSON),
   * created_at, clinic.
   */
  insertEvent: insertEventsSql(1, eventDeliveries),
  /**
   * The referenced records, each the clinic's and not disabled, in one statement (WriteContext.refs),
   * with the type's duration: per reference `[state, ...columns]` (1 usable, 2 disabled) or null;
   * the provider's lock is taken by the same statement, only when the provider is the clinic's.
   * Params lock space, clinic and provider, then clinic and id for patient, branch, provider, type.
   */
  references:
    'select (select pg_advisory_xact_lock(?, t.id) from "provider" t where t.clinic_id = ? and t.id = ?) as "lock", (select json_build_array(1) from "patient" t where t.clinic_id = ? and t.id = ?) as "r0", (select json_build_array(case when t."disabled_at" is null then 1 else 2 end) from "branch" t where t.clinic_id = ? and t.id = ?) as "r1", (select json_build_array(case when t."disabled_at" is null then 1 else 2 end) from "provider" t where t.clinic_id = ? and t.id = ?) as "r2", (select json_build_array(case when t."disabled_at" is null then 1 else 2 end, t."duration_minutes") from "appointment_type" t where t.clinic_id = ? and t.id = ?) as "r3"',
};

/** The statements the app runs that the raw server runs too, in the app's order. */
export const sharedBookingStatements = [
  bookingSql.references,
  bookingSql.overlap,
  bookingSql.bookingRules,
  bookingSql.insertAppointment,
  bookingSql.detailed,
  bookingSql.insertEvent,
] as const;
