import { type ChildList, newestFirst } from '../child-lists.ts';
import type { RecordList } from '../record-lists.ts';
import { Appointment } from './appointment.resource.ts';

/** A patient's appointments, newest first (docs/decisions.md). */
export const appointmentKeyset = newestFirst('appt', 'startAt');

export const patientAppointments: ChildList = {
  resource: Appointment,
  keyset: appointmentKeyset,
  parent: 'patient',
};

/** GET /v1/appointments: every appointment of the clinic, newest first by start. */
export const appointmentRecords: RecordList = {
  resource: Appointment,
  keyset: appointmentKeyset,
  timeProp: 'startAt',
  refs: {
    patient_id: ['patient', 'Patient'],
    branch_id: ['branch', 'Branch'],
    provider_id: ['provider', 'Provider'],
    status_id: ['status', 'AppointmentStatus'],
  },
};
