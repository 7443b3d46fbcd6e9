import type { KeysetSpec } from '../../db/pagination.ts';
import { Appointment as AppointmentEntity } from '../../entities/index.ts';
import type { ChildList } from '../child-lists.ts';
import type { Row } from '../resource.ts';

/** A patient's appointments, newest first (docs/decisions.md). */
export const appointmentKeyset: KeysetSpec<Row> = {
  tag: 'appt',
  sortBy: { prop: 'startAt', kind: 'date', dir: 'desc', get: (a) => a.startAt },
  idDir: 'desc',
  id: (a) => a.id,
};

export const patientAppointments: ChildList = {
  entity: AppointmentEntity,
  keyset: appointmentKeyset,
  parent: 'patient',
};
