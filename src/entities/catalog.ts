import { defineEntity, p } from '@mikro-orm/core';
import { type Address, tenantColumns, versionedTimestamps } from './tenant.ts';

/**
 * What every entry of a catalog list the API writes has (issue 16): its versioned timestamps (the
 * If-Match version) and `disabledAt`. A disabled entry leaves its list but stays readable by id,
 * since records written before still name it (docs/decisions.md: catalog writes).
 */
const catalogEntry = () => ({
  ...tenantColumns(),
  disabledAt: p.datetime().nullable(),
  ...versionedTimestamps(),
});

const BranchSchema = defineEntity({
  name: 'Branch',
  properties: {
    ...catalogEntry(),
    name: p.string(),
    phone: p.string().nullable(),
    address: p.json<Address>().nullable(),
    color: p.string().nullable(),
  },
});
export class Branch extends BranchSchema.class {}
BranchSchema.setClass(Branch);

const AppointmentTypeSchema = defineEntity({
  name: 'AppointmentType',
  properties: {
    ...catalogEntry(),
    name: p.string(),
    durationMinutes: p.integer(),
    color: p.string().nullable(),
  },
});
export class AppointmentType extends AppointmentTypeSchema.class {}
AppointmentTypeSchema.setClass(AppointmentType);

const AppointmentStatusSchema = defineEntity({
  name: 'AppointmentStatus',
  properties: {
    ...catalogEntry(),
    name: p.string(),
    color: p.string(),
    enabled: p.boolean().default(true),
  },
});
export class AppointmentStatus extends AppointmentStatusSchema.class {}
AppointmentStatusSchema.setClass(AppointmentStatus);

const TreatmentCategorySchema = defineEntity({
  name: 'TreatmentCategory',
  properties: {
    ...tenantColumns(),
    name: p.string(),
  },
});
export class TreatmentCategory extends TreatmentCategorySchema.class {}
TreatmentCategorySchema.setClass(TreatmentCategory);

const TreatmentMenuItemSchema = defineEntity({
  name: 'TreatmentMenuItem',
  properties: {
    ...catalogEntry(),
    name: p.string(),
    code: p.string().nullable(),
    price: p.decimal('number').precision(12).scale(2).nullable(),
    color: p.string().nullable(),
    category: () => p.manyToOne(TreatmentCategory).nullable(),
  },
});
export class TreatmentMenuItem extends TreatmentMenuItemSchema.class {}
TreatmentMenuItemSchema.setClass(TreatmentMenuItem);

const ProviderSchema = defineEntity({
  name: 'Provider',
  properties: {
    ...catalogEntry(),
    name: p.string(),
    type: p.string(),
    color: p.string().nullable(),
  },
});
export class Provider extends ProviderSchema.class {}
ProviderSchema.setClass(Provider);

const BillingAccountSchema = defineEntity({
  name: 'BillingAccount',
  properties: {
    ...catalogEntry(),
    businessName: p.string(),
    businessId: p.string().nullable(),
  },
});
export class BillingAccount extends BillingAccountSchema.class {}
BillingAccountSchema.setClass(BillingAccount);

const SpeciesSchema = defineEntity({
  name: 'Species',
  properties: {
    ...catalogEntry(),
    name: p.string(),
  },
});
export class Species extends SpeciesSchema.class {}
SpeciesSchema.setClass(Species);

const BreedSchema = defineEntity({
  name: 'Breed',
  properties: {
    ...catalogEntry(),
    name: p.string(),
    species: () => p.manyToOne(Species).nullable(),
  },
});
export class Breed extends BreedSchema.class {}
BreedSchema.setClass(Breed);

const VaccineSchema = defineEntity({
  name: 'Vaccine',
  properties: {
    ...catalogEntry(),
    name: p.string(),
    code: p.string().nullable(),
    species: () => p.manyToOne(Species).nullable(),
    intervalMonths: p.integer().nullable(),
    nextVaccine: () => p.manyToOne(Vaccine).nullable(),
    price: p.decimal('number').precision(12).scale(2).nullable(),
    batchRequired: p.boolean().default(false),
  },
});
export class Vaccine extends VaccineSchema.class {}
VaccineSchema.setClass(Vaccine);

const MeasurementSchema = defineEntity({
  name: 'Measurement',
  properties: {
    ...catalogEntry(),
    name: p.string(),
    unit: p.string().nullable(),
    isRequired: p.boolean().default(false),
  },
});
export class Measurement extends MeasurementSchema.class {}
MeasurementSchema.setClass(Measurement);

const PatientStatusSchema = defineEntity({
  name: 'PatientStatus',
  properties: {
    ...tenantColumns(),
    name: p.string(),
    color: p.string().nullable(),
  },
});
export class PatientStatus extends PatientStatusSchema.class {}
PatientStatusSchema.setClass(PatientStatus);
