import { insertRow } from '../../db/insert-row.ts';
import { runNamed, statementOf } from '../../db/named-statements.ts';
import {
  Appointment as AppointmentEntity,
  AppointmentStatus,
  AppointmentType,
  Branch,
  Patient,
  Provider,
} from '../../entities/index.ts';
import { AppError, invalid } from '../../lib/errors.ts';
import { toId } from '../../lib/ids.ts';
import { DATE_RANGE, inDateRange } from '../../lib/timestamps.ts';
import { clearable, text, z } from '../write-input.ts';
import { createInputOf, updateInputOf } from '../write-inputs-of.ts';
import { defineWrite, RaceLost, type WriteContext } from '../writes.ts';
import { Appointment, NOTE_MAX } from './appointment.resource.ts';
import { bookingRules, checkWorkingHours } from './booking-rules.ts';

/**
 * Appointments: book, change, cancel (issue 16). A provider's active bookings never overlap: the
 * service looks first, to name the booking in the way (409), and the database's exclusion
 * constraint `appointment_no_overlap` decides between two bookings racing for one slot.
 */
const MAX_LENGTH_MS = 24 * 3600_000;

/** The staff override of the working hours (src/services/appointments/booking-rules.ts). */
const overrideHours = z.boolean().optional().meta({
  description:
    "true books it outside the provider's working hours (an emergency on a closed day); without it such a time is a 422 on start.",
});

export const createAppointmentInput = createInputOf(Appointment, { outside_hours: overrideHours });
export const updateAppointmentInput = updateInputOf(Appointment, { outside_hours: overrideHours });

export const cancelAppointmentInput = z.strictObject({
  reason: clearable(text(NOTE_MAX)).meta({ description: 'Why; kept as the cancellation reason.' }),
});

const overlapError = (other: number) =>
  new AppError(
    'conflict',
    `The provider has another active appointment at that time (${toId('Appointment', other)}); choose another time or provider.`,
    { param: 'start', details: { conflicting_id: toId('Appointment', other) } },
  );

interface Booking {
  provider: Provider | null | undefined;
  startAt: Date;
  endAt: Date;
}

/** Bookings of one provider take turns (a transaction-scoped advisory lock); 'appt' names the lock space. */
const PROVIDER_LOCKS = 0x61707074;

/**
 * The provider's active booking that overlaps [start, end), other than `self`. Bookings of the
 * provider are serialised first, so this look is the decision and the exclusion constraint only
 * a backstop; racing inserts would otherwise wait on each other's rows, even deadlock.
 */
async function overlapping(
  w: WriteContext,
  b: Booking,
  self?: number,
  locked = false,
): Promise<number | null> {
  const provider = b.provider as Provider;
  if (!locked)
    await runNamed(w.em, statementOf('select pg_advisory_xact_lock(?, ?)'), [PROVIDER_LOCKS, provider.id]);
  // After the lock, in a statement of its own: under READ COMMITTED (the default, which this
  // relies on) its snapshot is taken after the lock was granted, so it sees every rival booking
  // that committed before. The exclusion constraint stays the backstop (RaceLost).
  // A plain statement, not em.findOne: the look costs a tenth of an entity query, and it must
  // not flush the change under test before it passes. Its range terms are the exclusion
  // constraint's own, so that constraint's GiST index (provider, time range) answers it.
  const { rows } = await runNamed(w.em, statementOf(OVERLAP_SQL), [
    w.clinicId,
    provider.id,
    b.startAt,
    b.endAt,
    self ?? 0,
  ]);
  return (rows[0] as { id: number } | undefined)?.id ?? null;
}

export const OVERLAP_SQL =
  'select "id" from "appointment" where "clinic_id" = ? and "provider_id" = ? and "cancelled_at" is null and tstzrange("start_at", "end_at") && tstzrange(?, ?) and "id" <> ? order by "start_at" limit 1';

/** `locked`: the provider's lock is held already (a booking takes it with its references). */
async function checkTimes(w: WriteContext, b: Booking, self?: number, locked = false) {
  if (b.endAt.getTime() <= b.startAt.getTime()) throw invalid('end', 'end must be after start.');
  // A computed end (start plus the type's duration, or the kept length) is held to the date range too.
  if (!inDateRange(b.endAt.getTime()))
    throw invalid(
      'start',
      `The appointment would end after ${DATE_RANGE.last}; start must leave room for its length.`,
    );
  if (b.endAt.getTime() - b.startAt.getTime() > MAX_LENGTH_MS)
    throw invalid('end', 'An appointment lasts at most 24 hours.');
  if (!b.provider) return;
  const other = await overlapping(w, b, self, locked);
  if (other) throw overlapError(other);
}

/** The type's default duration, for an `end` left out. */
function endFrom(start: Date, typeId: number | null | undefined, minutes: unknown): Date {
  if (typeId == null)
    throw invalid('end', 'end is required when there is no type_id (whose duration_minutes would give it).');
  return new Date(start.getTime() + Number(minutes) * 60_000);
}

export const createAppointment = defineWrite({
  name: 'createAppointment',
  method: 'POST',
  path: '/appointments',
  status: 201,
  tag: 'Appointments',
  summary: 'Book an appointment',
  description:
    'A booking that overlaps another active appointment of the same provider is a 409 naming it; of two bookings racing for one slot exactly one succeeds. Records appointment.created.',
  scopes: ['appointments:write'],
  input: createAppointmentInput,
  example: {
    patient_id: 'pat_1',
    branch_id: 'br_1',
    provider_id: 'prv_1',
    type_id: 'apt_1',
    start: '2026-12-01T09:30:00+02:00',
    note: 'First visit',
  },
  resource: Appointment,
  event: 'appointment.created',
  errors: {
    '409': {
      code: 'conflict',
      description:
        '`conflict`: the provider has another active appointment at that time (the message names it), or the Idempotency-Key was used with another body.',
      message:
        'The provider has another active appointment at that time (appt_41); choose another time or provider.',
      param: 'start',
    },
  },
  async run(w, input) {
    // One statement checks every reference (each the clinic's, none disabled) and reads the
    // type's duration: a booking is the write integrators call most.
    const { refs, values } = await w.refs(
      {
        patient_id: [Patient, input.patient_id],
        branch_id: [Branch, input.branch_id],
        provider_id: [Provider, input.provider_id],
        type_id: [AppointmentType, input.type_id, 'durationMinutes'],
        status_id: [AppointmentStatus, input.status_id],
      },
      { lock: [PROVIDER_LOCKS, 'provider_id'] },
    );
    const booking = {
      provider: refs.provider_id as Provider,
      startAt: input.start,
      endAt: input.end ?? endFrom(input.start, input.type_id, values.type_id?.durationMinutes),
    };
    await checkTimes(w, booking, undefined, true);
    const rules = await bookingRules(w, booking.provider.id);
    checkWorkingHours(rules, { ...booking, branch: input.branch_id }, input.outside_hours);
    // One INSERT, not an entity and a flush: nothing in the write reads the entity back (its
    // answer and event are read by id), and a flush's change-set work was a fifth of a booking.
    // A named statement built from the entity (insertRow): every column of it, each value by name.
    return raceChecked(() =>
      insertRow(w.em, AppointmentEntity, {
        clinic: w.clinicId,
        patient: refs.patient_id ?? null,
        branch: refs.branch_id ?? null,
        provider: booking.provider,
        type: refs.type_id ?? null,
        // A status left out is the clinic's default (booking-rules.ts), as seeded bookings have.
        status: refs.status_id ?? rules.defaultStatus,
        startAt: booking.startAt,
        endAt: booking.endAt,
        ...w.insertFields(input),
        cancelledAt: null,
        cancellationReason: null,
        createdAt: w.now,
        updatedAt: w.now,
      }),
    );
  },
});

export const updateAppointment = defineWrite({
  name: 'updateAppointment',
  method: 'PATCH',
  path: '/appointments/:id',
  ids: { id: 'Appointment' },
  status: 200,
  tag: 'Appointments',
  summary: 'Change an appointment',
  description:
    'Time, status, provider, branch, type or note. Moving start alone keeps the length; a move onto another active booking of the provider is a 409. A cancelled appointment cannot be changed. Records appointment.updated.',
  scopes: ['appointments:write'],
  input: updateAppointmentInput,
  example: { start: '2026-12-01T11:00:00+02:00', note: 'Moved at the patient’s request' },
  resource: Appointment,
  event: 'appointment.updated',
  async run(w, input, id) {
    const a = await w.load(AppointmentEntity, 'Appointment', id);
    if (a.cancelledAt)
      throw new AppError('conflict', 'The appointment is cancelled; book a new one instead.');
    if (input.branch_id !== undefined) a.branch = await w.ref(Branch, input.branch_id, 'branch_id');
    if (input.provider_id !== undefined) a.provider = await w.ref(Provider, input.provider_id, 'provider_id');
    if (input.type_id !== undefined)
      a.type = input.type_id === null ? null : await w.ref(AppointmentType, input.type_id, 'type_id');
    if (input.status_id !== undefined)
      a.status =
        input.status_id === null ? null : await w.ref(AppointmentStatus, input.status_id, 'status_id');
    w.setFields(a, input);
    if (input.start !== undefined || input.end !== undefined) {
      const length = a.endAt.getTime() - a.startAt.getTime();
      const start = input.start ?? a.startAt;
      a.startAt = start;
      a.endAt = input.end ?? new Date(start.getTime() + length);
    }
    await checkTimes(w, a, a.id);
    const moved =
      input.start !== undefined ||
      input.end !== undefined ||
      input.provider_id !== undefined ||
      input.branch_id !== undefined;
    if (moved && a.provider)
      checkWorkingHours(
        await bookingRules(w, a.provider.id),
        { ...a, branch: a.branch.id },
        input.outside_hours,
      );
    return (await flushed(w, a)).id;
  },
});

export const cancelAppointment = defineWrite({
  name: 'cancelAppointment',
  method: 'POST',
  path: '/appointments/:id/cancel',
  ids: { id: 'Appointment' },
  status: 200,
  tag: 'Appointments',
  summary: 'Cancel an appointment',
  description:
    'Sets cancelled_at (and cancellation_reason); the slot is free again. Cancelling twice is a 409. Records appointment.cancelled.',
  scopes: ['appointments:write'],
  input: cancelAppointmentInput,
  example: { reason: 'Patient called to cancel' },
  resource: Appointment,
  event: 'appointment.cancelled',
  async run(w, input, id) {
    const a = await w.load(AppointmentEntity, 'Appointment', id);
    if (a.cancelledAt) throw new AppError('conflict', 'The appointment is cancelled already.');
    a.cancelledAt = w.now;
    a.cancellationReason = input.reason ?? null;
    return a.id;
  },
});

/**
 * Flushes the booking. A rival that committed the same slot after the look above trips the
 * exclusion constraint: the write runs once more (RaceLost), and that look names the rival.
 */
async function flushed(w: WriteContext, a: AppointmentEntity): Promise<AppointmentEntity> {
  await raceChecked(() => w.em.flush());
  return a;
}

/** Runs the statement that takes the slot; a rival's committed booking of it is a RaceLost. */
async function raceChecked<T>(take: () => Promise<T>): Promise<T> {
  try {
    return await take();
  } catch (e) {
    // 23P01: the exclusion constraint; 40P01: a deadlock between racing bookings.
    const state = sqlState(e);
    if (state === '23P01' || state === '40P01') throw new RaceLost();
    throw e;
  }
}

function sqlState(e: unknown): string | undefined {
  let cur: any = e;
  for (let i = 0; i < 4 && cur; i++, cur = cur.cause ?? cur.previous)
    if (typeof cur.code === 'string') return cur.code;
  return undefined;
}
