/**
 * The statements of a booking (POST /v1/appointments) that bench/raw-server.ts runs exactly as the
 * app runs them (`?` placeholders, MikroORM's text): test/bench-sql.test.ts fails when the app's
 * change and these are not updated with them: the raw server runs every statement of the app's
 * booking, only without the ORM around them.
 */
import { OVERLAP_SQL } from '../src/services/appointments/appointment-writes.ts';
import { BOOKING_RULES_SQL } from '../src/services/appointments/booking-rules.ts';
import { insertEventsSql } from '../src/services/unit-of-work.ts';
import { eventDeliveries } from '../src/services/webhooks/event-deliveries.ts';

export const bookingSql = {
  /** The provider's active booking in the way, found through the exclusion constraint's index: params clinic, provider, start, end, the appointment itself (0 for a new one). */
  overlap: OVERLAP_SQL,
  /** The clinic's default status, its time zone and the provider's working week: params clinic, clinic, clinic, provider. */
  bookingRules: BOOKING_RULES_SQL,
  /**
   * The app builds this from the Appointment entity (src/db/insert-row.ts: every column, in the
   * entity's order), so a column added to the entity changes it: this pin then fails
   * test/bench-sql.test.ts until it is updated here, with the raw server's values (by column name).
   */
  insertAppointment:
    'insert into "appointment" ("clinic_id", "patient_id", "branch_id", "provider_id", "type_id", "status_id", "start_at", "end_at", "note", "cancelled_at", "cancellation_reason", "created_at", "updated_at") values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) returning "id"',
  /** The appointment as GET answers it (detailed), read through the write's transaction: params an int[] literal, clinic. */
  detailed:
    'select "e"."id", "e"."cancellation_reason", "e"."cancelled_at", "e"."created_at", "e"."end_at", "e"."note", "e"."start_at", "e"."updated_at", "j_branch"."id" as "j_branch__id", "j_branch"."name" as "j_branch__name", "j_patient"."id" as "j_patient__id", "j_patient"."first_name" as "j_patient__first_name", "j_patient"."last_name" as "j_patient__last_name", "j_patient"."phone" as "j_patient__phone", "j_provider"."id" as "j_provider__id", "j_provider"."name" as "j_provider__name", "j_status"."id" as "j_status__id", "j_status"."name" as "j_status__name", "j_status"."color" as "j_status__color", "j_type"."id" as "j_type__id", "j_type"."name" as "j_type__name" from "appointment" as "e" left join "branch" as "j_branch" on "e"."branch_id" = "j_branch"."id" left join "patient" as "j_patient" on "e"."patient_id" = "j_patient"."id" left join "provider" as "j_provider" on "e"."provider_id" = "j_provider"."id" left join "appointment_status" as "j_status" on "e"."status_id" = "j_status"."id" left join "appointment_type" as "j_type" on "e"."type_id" = "j_type"."id" where (e.id = any(?::int[])) and "e"."clinic_id" = ?',
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
