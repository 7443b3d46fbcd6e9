import { type ChildList, newestFirst } from '../child-lists.ts';
import { Appointment } from './appointment.resource.ts';

/** A patient's appointments, newest first (docs/decisions.md). */
export const appointmentKeyset = newestFirst('appt', 'startAt');

export const patientAppointments: ChildList = {
  resource: Appointment,
  keyset: appointmentKeyset,
  parent: 'patient',
};
