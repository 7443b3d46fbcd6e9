import { defineEntity, p } from '@mikro-orm/core';
import { Breed, PatientStatus, Species } from './catalog.ts';
import { type Address, tenantColumns, versionedTimestamps } from './tenant.ts';

export interface Contact {
  type: 'phone' | 'email';
  value: string;
  label: string | null;
}

const OwnerSchema = defineEntity({
  name: 'Owner',
  indexes: [{ properties: ['clinic', 'phone'] }],
  properties: {
    ...tenantColumns(),
    firstName: p.string().nullable(),
    lastName: p.string().nullable(),
    phone: p.string().nullable(),
    email: p.string().length(320).nullable(),
    address: p.json<Address>().nullable(),
    ...versionedTimestamps(),
  },
});
export class Owner extends OwnerSchema.class {}
OwnerSchema.setClass(Owner);

/**
 * A patient of a dental clinic, or an animal of a veterinary one (then `owner`, `species` and
 * `breed` are set, and phone/email are the owner's, copied so phone lookup works the same).
 */
const PatientSchema = defineEntity({
  name: 'Patient',
  indexes: [
    { properties: ['clinic', 'phone'] },
    { properties: ['clinic', 'emailLower'] },
    {
      name: 'patient_name_fl_idx',
      expression: 'create index "patient_name_fl_idx" on "patient" ("clinic_id", "name_fl" text_pattern_ops)',
    },
    {
      name: 'patient_name_lf_idx',
      expression: 'create index "patient_name_lf_idx" on "patient" ("clinic_id", "name_lf" text_pattern_ops)',
    },
  ],
  properties: {
    ...tenantColumns(),
    firstName: p.string().nullable(),
    lastName: p.string().nullable(),
    /** E.164 */
    phone: p.string().nullable(),
    /** As long as an address may be (RFC 5321: 320), which the write inputs take. */
    email: p.string().length(320).nullable(),
    emailLower: p.string().length(320).nullable(),
    gender: p.enum(['male', 'female'] as const).nullable(),
    /** YYYY-MM-DD */
    birthDate: p.string().columnType('date').nullable(),
    status: () => p.manyToOne(PatientStatus).nullable(),
    /** Folded "first last" and "last first" for accent- and case-insensitive prefix search. */
    nameFl: p.string().default(''),
    nameLf: p.string().default(''),
    address: p.json<Address>().nullable(),
    contacts: p.json<Contact[]>().nullable(),
    balance: p.decimal('number').precision(12).scale(2).nullable(),
    idNumber: p.string().nullable(),
    owner: () => p.manyToOne(Owner).nullable(),
    species: () => p.manyToOne(Species).nullable(),
    breed: () => p.manyToOne(Breed).nullable(),
    ...versionedTimestamps(),
  },
});
export class Patient extends PatientSchema.class {}
PatientSchema.setClass(Patient);
