import { AppError } from '../../lib/errors.ts';
import { tryParseId } from '../../lib/ids.ts';
import { type ChildList, newestFirst } from '../child-lists.ts';
import type { RecordList } from '../record-lists.ts';
import { Treatment } from './treatment.resource.ts';

/** A patient's treatments, newest first by performed_at. */
export const treatmentKeyset = newestFirst('trt', 'performedAt');

export const patientTreatments: ChildList = {
  resource: Treatment,
  keyset: treatmentKeyset,
  parent: 'patient',
  filters: (args) => treatmentFilters(args.appointment_id as string | null | undefined),
};

/** `appointment_id`: a malformed id is a 422, an unknown one an empty page. */
export function treatmentFilters(appointmentId: string | null | undefined): Record<string, number> {
  if (appointmentId == null || appointmentId === '') return {};
  const n = tryParseId('Appointment', appointmentId);
  if (n == null) {
    throw new AppError('validation_failed', `appointment_id '${appointmentId}' is not an appointment id.`, {
      param: 'appointment_id',
    });
  }
  return { appointment: n };
}

/** GET /v1/treatments: every treatment of the clinic, newest first by performed_at. */
export const treatmentRecords: RecordList = {
  resource: Treatment,
  keyset: treatmentKeyset,
  timeProp: 'performedAt',
  refs: {
    patient_id: ['patient', 'Patient'],
    provider_id: ['provider', 'Provider'],
    appointment_id: ['appointment', 'Appointment'],
  },
};
