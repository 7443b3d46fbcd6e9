import { toId } from '../../lib/ids.ts';
import { getPatient } from '../../services/patients/patients.ts';
import {
  type AppointmentResource,
  LINKS,
  type PatientResource,
  type PatientSummary,
  type PaymentResource,
  presentOwner,
  presentPatient,
  type TreatmentResource,
} from '../../services/presenters.ts';
import { builder } from '../builder.ts';
import type { GraphQLContext } from '../context.ts';
import { AddressType, ContactType, NamedRefType, OwnerType, StatusRefType } from '../shared.ts';

/**
 * owner and species: embedded when REST's include or the GraphQL patients page read them with the
 * patient, otherwise batched by DataLoader.
 */
async function ownerOf(p: PatientSummary, ctx: GraphQLContext) {
  if ('owner' in p || ctx.rest) return p.owner ?? null;
  const id = p[LINKS].ownerId;
  return id == null ? null : presentOwner(await ctx.loaders.owner.load(id), ctx.principal);
}

async function speciesOf(p: PatientSummary, ctx: GraphQLContext) {
  if ('species' in p || ctx.rest) return p.species ?? null;
  const id = p[LINKS].speciesId;
  if (id == null) return null;
  const s = await ctx.loaders.species.load(id);
  return s ? { id: toId('Species', s.id), name: s.name } : null;
}

const vetFields = (t: any) => ({
  owner: t.field({
    type: OwnerType,
    nullable: true,
    description: "Veterinary clinics: the animal's owner. REST embeds it with include=owner.",
    resolve: (p: PatientSummary, _a: unknown, ctx: GraphQLContext) => ownerOf(p, ctx),
  }),
  species: t.field({
    type: NamedRefType,
    nullable: true,
    description: "Veterinary clinics: the animal's species. REST embeds it with include=species.",
    resolve: (p: PatientSummary, _a: unknown, ctx: GraphQLContext) => speciesOf(p, ctx),
  }),
});

export const PatientSummaryType = builder.objectRef<PatientSummary>('PatientSummary').implement({
  description: 'The patient (or animal) a record belongs to.',
  fields: (t) => ({
    id: t.exposeID('id'),
    first_name: t.exposeString('first_name', { nullable: true }),
    last_name: t.exposeString('last_name', { nullable: true }),
    phone: t.exposeString('phone', { nullable: true }),
    ...vetFields(t),
  }),
});

export const PatientType = builder.objectRef<PatientResource>('Patient');

builder.node(PatientType, {
  description: 'A patient; at a veterinary clinic, the animal.',
  id: { resolve: (p) => p.id },
  loadOne: async (id, ctx) => presentPatient(await getPatient(ctx.svc, String(id)), ctx.principal),
  fields: (t) => ({
    first_name: t.exposeString('first_name', { nullable: true }),
    last_name: t.exposeString('last_name', { nullable: true }),
    phone: t.exposeString('phone', {
      nullable: true,
      description: 'Primary phone, local form (e.g. 0501234567).',
    }),
    email: t.exposeString('email', { nullable: true }),
    gender: t.exposeString('gender', { nullable: true, description: 'male, female, or null.' }),
    birth_date: t.exposeString('birth_date', { nullable: true, description: 'YYYY-MM-DD' }),
    status: t.expose('status', { type: StatusRefType, nullable: true }),
    created_at: t.exposeString('created_at', { nullable: true }),
    updated_at: t.exposeString('updated_at', { nullable: true }),
    address: t.expose('address', {
      type: AddressType,
      nullable: true,
      description: 'Detailed format only in REST.',
    }),
    contacts: t.expose('contacts', {
      type: [ContactType],
      nullable: true,
      description: 'Detailed format only in REST.',
    }),
    balance: t.exposeFloat('balance', { nullable: true, description: 'Detailed format only in REST.' }),
    id_number: t.exposeString('id_number', { nullable: true, description: 'Detailed format only in REST.' }),
    ...vetFields(t),
  }),
});

export const AppointmentType = builder.objectRef<AppointmentResource>('Appointment').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    patient: t.expose('patient', { type: PatientSummaryType }),
    branch: t.expose('branch', { type: NamedRefType }),
    provider: t.expose('provider', { type: NamedRefType, nullable: true }),
    type: t.expose('type', { type: NamedRefType, nullable: true }),
    status: t.expose('status', { type: StatusRefType, nullable: true }),
    start: t.exposeString('start'),
    end: t.exposeString('end'),
    note: t.exposeString('note', { nullable: true }),
    cancelled_at: t.exposeString('cancelled_at', { nullable: true }),
    created_at: t.exposeString('created_at'),
    updated_at: t.exposeString('updated_at'),
  }),
});

const TreatmentItemRef = builder
  .objectRef<{ id: string; name: string; code: string | null }>('TreatmentRef')
  .implement({
    fields: (t) => ({
      id: t.exposeID('id'),
      name: t.exposeString('name'),
      code: t.exposeString('code', { nullable: true }),
    }),
  });

export const TreatmentType = builder.objectRef<TreatmentResource>('Treatment').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    patient: t.expose('patient', { type: PatientSummaryType }),
    appointment_id: t.exposeString('appointment_id', { nullable: true }),
    treatment: t.expose('treatment', { type: TreatmentItemRef, nullable: true }),
    provider: t.expose('provider', { type: NamedRefType, nullable: true }),
    description: t.exposeString('description', { nullable: true }),
    teeth: t.exposeStringList('teeth', { nullable: true }),
    price: t.exposeFloat('price', { nullable: true }),
    status: t.exposeString('status', { description: 'planned or completed' }),
    performed_at: t.exposeString('performed_at'),
    note: t.exposeString('note', { nullable: true }),
    cancelled_at: t.exposeString('cancelled_at', { nullable: true }),
    created_at: t.exposeString('created_at'),
    updated_at: t.exposeString('updated_at'),
  }),
});

const BillingAccountRef = builder
  .objectRef<{ id: string; business_name: string }>('BillingAccountRef')
  .implement({ fields: (t) => ({ id: t.exposeID('id'), business_name: t.exposeString('business_name') }) });

const PaymentMethod = builder.objectRef<{ type: string }>('PaymentMethod').implement({
  description: 'How it was paid. Card, check and bank details are never returned.',
  fields: (t) => ({
    type: t.exposeString('type', { description: 'cash, card, check, bank_transfer or other' }),
  }),
});

export const PaymentType = builder.objectRef<PaymentResource>('Payment').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    patient: t.expose('patient', { type: PatientSummaryType }),
    billing_account: t.expose('billing_account', { type: BillingAccountRef }),
    amount: t.exposeFloat('amount'),
    currency: t.exposeString('currency'),
    method: t.expose('method', { type: PaymentMethod }),
    is_refund: t.exposeBoolean('is_refund'),
    refund_of_id: t.exposeString('refund_of_id', { nullable: true }),
    receipt_number: t.exposeString('receipt_number', { nullable: true }),
    paid_at: t.exposeString('paid_at'),
    note: t.exposeString('note', { nullable: true }),
    cancelled_at: t.exposeString('cancelled_at', { nullable: true }),
    created_at: t.exposeString('created_at'),
    updated_at: t.exposeString('updated_at'),
  }),
});
