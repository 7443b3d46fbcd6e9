import { Appointment as AppointmentEntity } from '../../entities/index.ts';
import { type ChildList, newestFirst } from '../child-lists.ts';

/** A patient's appointments, newest first (docs/decisions.md). */
export const appointmentKeyset = newestFirst('appt', 'startAt');

export const patientAppointments: ChildList = {
  entity: AppointmentEntity,
  keyset: appointmentKeyset,
  parent: 'patient',
};
