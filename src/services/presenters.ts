import type { Principal } from '../auth/keys.ts';
import type { Address, Contact, Payment, Treatment } from '../entities/index.ts';
import { toId, toIdOrNull } from '../lib/ids.ts';
import { toLocal } from '../lib/phone.ts';
import { isoOf, type Timestamp } from '../lib/timestamps.ts';

/**
 * Entity → REST resource. These objects are what /v1 returns, what GraphQL fields read, and what
 * event envelopes carry as `data`, so the three can never disagree.
 */
export const iso = (d: Timestamp | null | undefined): string | null => (d == null ? null : isoOf(d));

export interface NamedRef {
  id: string;
  name: string;
}

export interface StatusRef {
  id: string;
  name: string;
  color: string | null;
}

export interface OwnerResource {
  id: string;
  first_name: string | null;
  last_name: string | null;
  phone: string | null;
  email: string | null;
}

export interface PatientIncludes {
  owner: boolean;
  species: boolean;
}

/**
 * What the presenters read. Entities satisfy these, and so do the plain rows of lean reads
 * (services/lean.ts), which list endpoints use instead of hydrating entities.
 */
export interface OwnerData {
  id: number;
  firstName?: string | null;
  lastName?: string | null;
  phone?: string | null;
  email?: string | null;
}

export interface PatientData extends OwnerData {
  gender?: string | null;
  birthDate?: string | null;
  status?: { id: number; name: string; color?: string | null } | null;
  createdAt?: Timestamp | null;
  updatedAt?: Timestamp | null;
  address?: Address | null;
  contacts?: Contact[] | null;
  /** A number from an entity, a numeric string from a lean row. */
  balance?: number | string | null;
  idNumber?: string | null;
  owner?: OwnerData | null;
  species?: { id: number; name?: string } | null;
}

type NamedData = { id: number; name: string };

export interface AppointmentData {
  id: number;
  patient: PatientData;
  branch: NamedData;
  provider?: NamedData | null;
  type?: NamedData | null;
  status?: { id: number; name: string; color?: string | null } | null;
  startAt: Timestamp;
  endAt: Timestamp;
  note?: string | null;
  cancelledAt?: Timestamp | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

/** An appointment row read for a GraphQL selection: only `id`, `patient` and `startAt` are sure. */
export type PartialAppointmentData = Pick<AppointmentData, 'id' | 'patient' | 'startAt'> &
  Partial<AppointmentData>;

/** Internal links a resource keeps for GraphQL resolvers; a symbol key never reaches JSON. */
export const LINKS = Symbol('links');

export interface PatientSummary {
  id: string;
  first_name: string | null;
  last_name: string | null;
  phone: string | null;
  owner?: OwnerResource | null;
  species?: NamedRef | null;
  [LINKS]: { patientId: number; ownerId: number | null; speciesId: number | null };
}

export interface PatientResource extends PatientSummary {
  email: string | null;
  gender: string | null;
  birth_date: string | null;
  status: StatusRef | null;
  created_at: string | null;
  updated_at: string | null;
  address?: Address | null;
  contacts?: Contact[] | null;
  balance?: number | null;
  id_number?: string | null;
}

/** Fields added by response_format=detailed (see docs/decisions.md). */
export const detailedPatientFields = ['address', 'contacts', 'balance', 'id_number'] as const;

export function presentOwner(o: OwnerData | null | undefined, principal: Principal): OwnerResource | null {
  if (!o) return null;
  return {
    id: toId('Owner', o.id),
    first_name: o.firstName ?? null,
    last_name: o.lastName ?? null,
    phone: toLocal(o.phone, principal.country),
    email: o.email ?? null,
  };
}

function ownerIfLoaded(p: PatientData, principal: Principal): OwnerResource | null {
  return p.owner ? presentOwner(p.owner, principal) : null;
}

export function presentPatientSummary(
  p: PatientData,
  principal: Principal,
  include?: PatientIncludes,
): PatientSummary {
  const out: PatientSummary = {
    id: toId('Patient', p.id),
    first_name: p.firstName ?? null,
    last_name: p.lastName ?? null,
    phone: toLocal(p.phone, principal.country),
    [LINKS]: { patientId: p.id, ownerId: p.owner?.id ?? null, speciesId: p.species?.id ?? null },
  };
  if (include?.owner) out.owner = ownerIfLoaded(p, principal);
  if (include?.species)
    out.species = p.species ? { id: toId('Species', p.species.id), name: p.species.name ?? '' } : null;
  return out;
}

export function presentPatient(
  p: PatientData,
  principal: Principal,
  include?: PatientIncludes,
): PatientResource {
  // The summary grows into the resource (same key order as a spread, without copying it).
  const out = presentPatientSummary(p, principal, include) as PatientResource;
  out.email = p.email ?? null;
  out.gender = p.gender ?? null;
  out.birth_date = p.birthDate ?? null;
  out.status = p.status
    ? { id: toId('PatientStatus', p.status.id), name: p.status.name, color: p.status.color ?? null }
    : null;
  out.created_at = iso(p.createdAt);
  out.updated_at = iso(p.updatedAt);
  out.address = p.address ?? null;
  out.contacts = p.contacts ?? null;
  out.balance = p.balance == null ? null : Number(p.balance);
  out.id_number = p.idNumber ?? null;
  return out;
}

export const ref = (
  kind: Parameters<typeof toId>[0],
  e: { id: number; name: string } | null | undefined,
): NamedRef | null => (e ? { id: toId(kind, e.id), name: e.name } : null);

export { toIdOrNull };

export interface AppointmentResource {
  id: string;
  patient: PatientSummary;
  branch: NamedRef;
  provider: NamedRef | null;
  type: NamedRef | null;
  status: StatusRef | null;
  start: string;
  end: string;
  note: string | null;
  cancelled_at: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * `patient`: the patient's summary when the caller has it already presented. A row read for a
 * GraphQL selection (`appointmentReadFor`) carries only the selected fields; the resource then
 * leaves out the others, which that query never reads.
 */
export function presentAppointment(
  a: AppointmentData | PartialAppointmentData,
  principal: Principal,
  include?: PatientIncludes,
  patient?: PatientSummary,
): AppointmentResource {
  const out: Partial<AppointmentResource> = {
    id: toId('Appointment', a.id),
    patient: patient ?? presentPatientSummary(a.patient, principal, include),
  };
  if (a.branch !== undefined) out.branch = { id: toId('Branch', a.branch.id), name: a.branch.name };
  if (a.provider !== undefined) out.provider = ref('Provider', a.provider);
  if (a.type !== undefined) out.type = ref('AppointmentType', a.type);
  if (a.status !== undefined) {
    out.status = a.status
      ? { id: toId('AppointmentStatus', a.status.id), name: a.status.name, color: a.status.color ?? null }
      : null;
  }
  out.start = isoOf(a.startAt);
  if (a.endAt !== undefined) out.end = isoOf(a.endAt);
  if (a.note !== undefined) out.note = a.note ?? null;
  if (a.cancelledAt !== undefined) out.cancelled_at = iso(a.cancelledAt);
  if (a.createdAt !== undefined) out.created_at = isoOf(a.createdAt);
  if (a.updatedAt !== undefined) out.updated_at = isoOf(a.updatedAt);
  return out as AppointmentResource;
}

export interface TreatmentResource {
  id: string;
  patient: PatientSummary;
  appointment_id: string | null;
  treatment: { id: string; name: string; code: string | null } | null;
  provider: NamedRef | null;
  description: string | null;
  teeth: string[] | null;
  price: number | null;
  status: string;
  performed_at: string;
  note: string | null;
  cancelled_at: string | null;
  created_at: string;
  updated_at: string;
}

export function presentTreatment(
  t: Treatment,
  principal: Principal,
  include?: PatientIncludes,
): TreatmentResource {
  return {
    id: toId('Treatment', t.id),
    patient: presentPatientSummary(t.patient, principal, include),
    appointment_id: toIdOrNull('Appointment', t.appointment?.id),
    treatment: t.menuItem
      ? { id: toId('TreatmentMenuItem', t.menuItem.id), name: t.menuItem.name, code: t.menuItem.code ?? null }
      : null,
    provider: ref('Provider', t.provider),
    description: t.description ?? null,
    teeth: t.teeth ?? null,
    price: t.price ?? null,
    status: t.status,
    performed_at: t.performedAt.toISOString(),
    note: t.note ?? null,
    cancelled_at: iso(t.cancelledAt),
    created_at: t.createdAt.toISOString(),
    updated_at: t.updatedAt.toISOString(),
  };
}

export interface PaymentResource {
  id: string;
  patient: PatientSummary;
  billing_account: { id: string; business_name: string };
  amount: number;
  currency: string;
  method: { type: string };
  is_refund: boolean;
  refund_of_id: string | null;
  receipt_number: string | null;
  paid_at: string;
  note: string | null;
  cancelled_at: string | null;
  created_at: string;
  updated_at: string;
}

/** Card, check and bank details (methodDetails) are deliberately not read here. */
export function presentPayment(p: Payment, principal: Principal, include?: PatientIncludes): PaymentResource {
  return {
    id: toId('Payment', p.id),
    patient: presentPatientSummary(p.patient, principal, include),
    billing_account: {
      id: toId('BillingAccount', p.billingAccount.id),
      business_name: p.billingAccount.businessName,
    },
    amount: p.amount,
    currency: p.currency,
    method: { type: p.methodType },
    is_refund: p.isRefund,
    refund_of_id: toIdOrNull('Payment', p.refundOf?.id),
    receipt_number: p.receiptNumber ?? null,
    paid_at: p.paidAt.toISOString(),
    note: p.note ?? null,
    cancelled_at: iso(p.cancelledAt),
    created_at: p.createdAt.toISOString(),
    updated_at: p.updatedAt.toISOString(),
  };
}
