import { Appointment } from '../../services/appointments/appointment.resource.ts';
import { Patient, PatientSummary } from '../../services/patients/patient.resource.ts';
import { getPatient } from '../../services/patients/patients.ts';
import { Payment } from '../../services/payments/payment.resource.ts';
import { getRecord } from '../../services/record-lists.ts';
import { everyGroupOf, restGroups, viewFor } from '../../services/resource.ts';
import { Treatment } from '../../services/treatments/treatment.resource.ts';
import { nodeType, objectType } from '../resource-types.ts';

/** node(id:) and patient(id:) present every field: a single row costs the same either way. */
export const everyPatientField = everyGroupOf(Patient);

export const PatientType = nodeType(Patient, (id, ctx) =>
  getPatient(ctx, id, viewFor(Patient, everyPatientField)),
);
export const PatientSummaryType = objectType(PatientSummary);
export const AppointmentType = nodeType(Appointment, (id, ctx) =>
  getRecord(ctx, Appointment, id, restGroups(true, [])),
);
export const TreatmentType = nodeType(Treatment, (id, ctx) =>
  getRecord(ctx, Treatment, id, restGroups(true, [])),
);
export const PaymentType = nodeType(Payment, (id, ctx) => getRecord(ctx, Payment, id, restGroups(true, [])));
