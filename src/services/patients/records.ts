import type { FilterQuery } from '@mikro-orm/postgresql';
import { Appointment, Payment, Treatment } from '../../entities/index.ts';
import { AppError } from '../../lib/errors.ts';
import { tryParseId } from '../../lib/ids.ts';
import { type KeysetSpec, type Page, paginate } from '../../lib/pagination.ts';
import type { ServiceContext } from '../context.ts';
import { leanFind } from '../lean.ts';
import type { AppointmentData, PartialAppointmentData, PatientIncludes } from '../presenters.ts';
import { appointmentRead } from './batch.ts';
import { getPatient } from './patients.ts';

/** A patient's appointments, treatments and payments: newest first, keyset on the record's time. */
export const appointmentKeyset: KeysetSpec<PartialAppointmentData> = {
  tag: 'appt',
  sortBy: { prop: 'startAt', kind: 'date', dir: 'desc', get: (a) => a.startAt },
  idDir: 'desc',
  id: (a) => a.id,
};
export const treatmentKeyset: KeysetSpec<Treatment> = {
  tag: 'trt',
  sortBy: { prop: 'performedAt', kind: 'date', dir: 'desc', get: (t) => t.performedAt },
  idDir: 'desc',
  id: (t) => t.id,
};
export const paymentKeyset: KeysetSpec<Payment> = {
  tag: 'pay',
  sortBy: { prop: 'paidAt', kind: 'date', dir: 'desc', get: (p) => p.paidAt },
  idDir: 'desc',
  id: (p) => p.id,
};

interface ListArgs {
  limit?: unknown;
  cursor?: unknown;
  include?: PatientIncludes;
}

export async function listPatientAppointments(
  ctx: ServiceContext,
  patientId: string,
  args: ListArgs,
): Promise<Page<AppointmentData>> {
  const patient = await getPatient(ctx, patientId, args.include);
  const page = await paginate(appointmentKeyset, args, ({ after, orderBy, take }) =>
    leanFind<AppointmentData>(ctx.em, Appointment, {
      ...appointmentRead,
      where: { patient: patient.id, ...(after ?? {}) },
      orderBy,
      limit: take,
    }),
  );
  // Every row is this patient's: its summary (with what include asked for) is the one loaded.
  for (const a of page.items) a.patient = patient;
  return page;
}

export async function listPatientTreatments(
  ctx: ServiceContext,
  patientId: string,
  args: ListArgs & { appointmentId?: string | null },
): Promise<Page<Treatment>> {
  const patient = await getPatient(ctx, patientId, args.include);
  const where: FilterQuery<Treatment> = { patient };
  if (args.appointmentId != null && args.appointmentId !== '') {
    const n = tryParseId('Appointment', args.appointmentId);
    if (n == null) {
      throw new AppError(
        'validation_failed',
        `appointment_id '${args.appointmentId}' is not an appointment id.`,
        {
          param: 'appointment_id',
        },
      );
    }
    Object.assign(where, { appointment: n });
  }
  return paginate(treatmentKeyset, args, ({ after, orderBy, take }) =>
    ctx.em.find(Treatment, { ...where, ...(after ?? {}) } as FilterQuery<Treatment>, {
      orderBy,
      limit: take,
      populate: ['menuItem', 'provider'],
      strategy: 'joined',
    }),
  );
}

export async function listPatientPayments(
  ctx: ServiceContext,
  patientId: string,
  args: ListArgs,
): Promise<Page<Payment>> {
  const patient = await getPatient(ctx, patientId, args.include);
  return paginate(paymentKeyset, args, ({ after, orderBy, take }) =>
    ctx.em.find(Payment, { patient, ...(after ?? {}) } as FilterQuery<Payment>, {
      orderBy,
      limit: take,
      populate: ['billingAccount'],
      strategy: 'joined',
    }),
  );
}
