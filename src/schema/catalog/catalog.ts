import type { Scope } from '../../auth/scopes.ts';
import * as catalog from '../../services/catalog/catalog.ts';
import type { ServiceContext } from '../../services/context.ts';
import { builder } from '../builder.ts';
import { AddressType, restList } from '../shared.ts';

type Row<F extends (...a: any[]) => Promise<any[]>> = Awaited<ReturnType<F>>[number];

const Branch = builder.objectRef<Row<typeof catalog.listBranches>>('Branch').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    phone: t.exposeString('phone', { nullable: true }),
    address: t.expose('address', { type: AddressType }),
    color: t.exposeString('color', { nullable: true }),
  }),
});

const AppointmentTypeItem = builder
  .objectRef<Row<typeof catalog.listAppointmentTypes>>('AppointmentTypeItem')
  .implement({
    fields: (t) => ({
      id: t.exposeID('id'),
      name: t.exposeString('name'),
      duration_minutes: t.exposeInt('duration_minutes', { description: 'Default duration.' }),
      color: t.exposeString('color', { nullable: true }),
    }),
  });

const AppointmentStatusItem = builder
  .objectRef<Row<typeof catalog.listAppointmentStatuses>>('AppointmentStatusItem')
  .implement({
    fields: (t) => ({
      id: t.exposeID('id'),
      name: t.exposeString('name'),
      color: t.exposeString('color'),
      enabled: t.exposeBoolean('enabled'),
    }),
  });

const TreatmentMenuItem = builder
  .objectRef<Row<typeof catalog.listTreatmentMenu>>('TreatmentMenuItem')
  .implement({
    fields: (t) => ({
      id: t.exposeID('id'),
      name: t.exposeString('name'),
      code: t.exposeString('code', { nullable: true }),
      price: t.exposeFloat('price', { nullable: true }),
      color: t.exposeString('color', { nullable: true }),
      category_id: t.exposeString('category_id', { nullable: true }),
    }),
  });

const Provider = builder.objectRef<Row<typeof catalog.listProviders>>('Provider').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    type: t.exposeString('type', { description: 'e.g. dentist, hygienist, veterinarian' }),
    color: t.exposeString('color', { nullable: true }),
  }),
});

const BillingAccount = builder
  .objectRef<Row<typeof catalog.listBillingAccounts>>('BillingAccount')
  .implement({
    fields: (t) => ({
      id: t.exposeID('id', { description: 'Pass as billing_account_id when recording a payment.' }),
      business_name: t.exposeString('business_name'),
      business_id: t.exposeString('business_id', {
        nullable: true,
        description: 'Registered number printed on receipts.',
      }),
    }),
  });

const Species = builder.objectRef<Row<typeof catalog.listSpecies>>('Species').implement({
  fields: (t) => ({ id: t.exposeID('id'), name: t.exposeString('name') }),
});

const Breed = builder.objectRef<Row<typeof catalog.listBreeds>>('Breed').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    species_id: t.exposeString('species_id', { nullable: true }),
  }),
});

const Vaccine = builder.objectRef<Row<typeof catalog.listVaccines>>('Vaccine').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    code: t.exposeString('code', { nullable: true }),
    species_id: t.exposeString('species_id', { nullable: true }),
    interval_months: t.exposeInt('interval_months', { nullable: true }),
    next_vaccine_id: t.exposeString('next_vaccine_id', { nullable: true }),
    price: t.exposeFloat('price', { nullable: true }),
    batch_required: t.exposeBoolean('batch_required'),
  }),
});

const Measurement = builder.objectRef<Row<typeof catalog.listMeasurements>>('Measurement').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    unit: t.exposeString('unit', { nullable: true }),
    is_required: t.exposeBoolean('is_required'),
  }),
});

/**
 * Each catalog list is one Public field (a plain list) and one Rest field (`{data: [...]}`),
 * both over the same service function and the same scopes.
 */
function catalogList(
  publicName: string,
  restName: string,
  type: any,
  load: (svc: ServiceContext, args: any) => Promise<any[]>,
  scopes: Scope[],
  description: string,
  args: (t: any) => Record<string, any> = () => ({}),
) {
  const authScopes = { $all: Object.fromEntries(scopes.map((s) => [s, true])) } as any;
  const Body = restList(`${type.name}List`, type);
  builder.queryFields((t) => ({
    [publicName]: t.field({
      type: [type],
      subGraphs: ['Public'],
      // Nullable, like every scope-guarded root field: a forbidden list does not null the others.
      nullable: true,
      authScopes,
      description,
      args: args(t),
      resolve: (_root: unknown, a: any, ctx: any) => load(ctx.svc, a),
    }),
    [restName]: t.field({
      type: Body,
      subGraphs: ['Rest'],
      authScopes,
      description,
      args: args(t),
      resolve: async (_root: unknown, a: any, ctx: any) => ({ data: await load(ctx.svc, a) }),
    }),
  }));
}

const vetNote = ' Veterinary clinics only; empty at a dental clinic.';
catalogList('branches', 'listBranches', Branch, catalog.listBranches, ['catalog:read'], 'Branches.');
catalogList(
  'appointmentTypes',
  'listAppointmentTypes',
  AppointmentTypeItem,
  catalog.listAppointmentTypes,
  ['catalog:read'],
  'Appointment types.',
);
catalogList(
  'appointmentStatuses',
  'listAppointmentStatuses',
  AppointmentStatusItem,
  catalog.listAppointmentStatuses,
  ['catalog:read'],
  'Appointment statuses.',
);
catalogList(
  'treatmentMenu',
  'listTreatmentMenu',
  TreatmentMenuItem,
  catalog.listTreatmentMenu,
  ['catalog:read'],
  'The procedure menu.',
);
catalogList('providers', 'listProviders', Provider, catalog.listProviders, ['catalog:read'], 'Providers.');
catalogList(
  'billingAccounts',
  'listBillingAccounts',
  BillingAccount,
  catalog.listBillingAccounts,
  ['catalog:read'],
  'Billing accounts.',
);
catalogList('species', 'listSpecies', Species, catalog.listSpecies, ['catalog:read'], `Species.${vetNote}`);
catalogList(
  'breeds',
  'listBreeds',
  Breed,
  (svc, a) => catalog.listBreeds(svc, { speciesId: a.species_id }),
  ['catalog:read'],
  `Breeds, optionally of one species.${vetNote}`,
  (t) => ({ species_id: t.arg.string({ required: false }) }),
);
catalogList(
  'vaccines',
  'listVaccines',
  Vaccine,
  catalog.listVaccines,
  ['catalog:read', 'vaccines:read'],
  `Vaccines.${vetNote}`,
);
catalogList(
  'measurements',
  'listMeasurements',
  Measurement,
  catalog.listMeasurements,
  ['catalog:read', 'measurements:read'],
  `Measurements.${vetNote}`,
);
