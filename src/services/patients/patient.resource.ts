import { defineEnum } from '../../lib/enums.ts';
import { toLocal } from '../../lib/phone.ts';
import { ContactType } from '../closed-sets.ts';
import { addressInput } from '../contact-input.ts';
import { createdAt, updatedAt } from '../record-times.ts';
import { defineResource, f } from '../resource.ts';
import { Address, Contact, NamedRef, StatusRef } from '../shapes.ts';
import { clearable, date, identifier, idOf, name, text, z } from '../write-input.ts';
import { Owner } from './owner.resource.ts';
import { personFields, phoneWrite } from './person-fields.ts';

export const Gender = defineEnum('Gender', "A patient's (or animal's) sex, as the clinic records it.", {
  male: 'Male.',
  female: 'Female.',
});

/**
 * Veterinary context, embedded with include=owner / include=species (docs/decisions.md); written
 * by the animal's writes only (kinds: ['animal']); a dental patient's own fields say ['person'].
 */
const vet = {
  owner: f.join('owner', 'Owner', Owner, {
    nullable: true,
    group: 'include:owner',
    description: "Veterinary clinics: the animal's owner.",
    // An animal always has one: it is added to a client, and may move to another.
    write: {
      on: 'both',
      input: idOf('Owner'),
      name: 'client_id',
      description: "The owner (a client's id).",
      create: 'required',
      update: 'optional',
      kinds: ['animal'],
    },
  }),
  species: f.join('species', 'Species', NamedRef, {
    nullable: true,
    group: 'include:species',
    description: "Veterinary clinics: the animal's species.",
    nullMeans: 'unknown',
    write: { on: 'both', input: idOf('Species'), kinds: ['animal'] },
  }),
  // With the species it is one of: a breed_id written is read back (test/write-agreement.test.ts).
  breed: f.join('breed', 'Breed', NamedRef, {
    nullable: true,
    group: 'include:species',
    description: "Veterinary clinics: the animal's breed (one of its species' breeds).",
    nullMeans: 'unknown',
    write: {
      on: 'both',
      input: idOf('Breed'),
      description: "One of the species' breeds.",
      kinds: ['animal'],
    },
  }),
};

const identity = {
  id: f.id({ description: 'The patient id (pat_…).' }),
  first_name: personFields.first_name,
  last_name: personFields.last_name,
};

const phone = (description?: string) =>
  f.column('phone', 'String', {
    nullable: true,
    convert: (v, pc) => toLocal(v, pc.country),
    ...(description ? { description } : {}),
    write: phoneWrite,
  });

/** A further phone or email of a patient; a phone is stored in E.164 (`run` converts it). */
export const contactInput = z.strictObject({
  type: z.enum(ContactType.values).meta({ description: 'Whether the value is a phone or an email address.' }),
  value: name(320).meta({ description: 'The phone (any form; stored in E.164) or the email address.' }),
  label: clearable(text(100)).meta({ description: 'Whose or which it is, e.g. work.' }),
});

/** The patient a record (appointment, treatment, payment) belongs to. */
export const PatientSummary = defineResource({
  name: 'PatientSummary',
  kind: 'Patient',
  // Embedded in records, whose scopes guard them.
  scopes: [],
  description: 'The patient (or animal) a record belongs to.',
  fields: { ...identity, phone: phone('Primary phone, local form (e.g. 0501234567).'), ...vet },
});

const detailed = { group: 'detailed' } as const;

export const Patient = defineResource({
  name: 'Patient',
  kind: 'Patient',
  scopes: ['patients:read'],
  description: 'A patient; at a veterinary clinic, the animal.',
  fields: {
    ...identity,
    phone: phone('Primary phone, local form (e.g. 0501234567).'),
    email: personFields.email,
    gender: f.column('gender', 'String', {
      nullable: true,
      enum: Gender,
      description: 'male, female, or null (not recorded).',
      write: {
        on: 'both',
        input: z.enum(Gender.values),
        description: 'The recorded gender; null when not recorded.',
      },
    }),
    birth_date: f.column('birthDate', 'String', {
      nullable: true,
      description: 'YYYY-MM-DD',
      // Not in the future by the write's clock.
      write: {
        on: 'both',
        input: date,
        description: 'Date of birth, YYYY-MM-DD; not in the future.',
        byRun: true,
      },
    }),
    status: f.join('status', 'PatientStatus', StatusRef, {
      nullable: true,
      description: "The patient's status, one the clinic configured (e.g. Active); null when none is set.",
      write: { on: 'both', input: idOf('PatientStatus') },
    }),
    created_at: createdAt({ nullable: true }),
    updated_at: updatedAt({ nullable: true }),
    address: f.json('address', Address, {
      nullable: true,
      ...detailed,
      description: 'Postal address; null when not recorded.',
      // Stored with every key (addressOf).
      write: { on: 'both', input: addressInput, byRun: true, kinds: ['person'] },
    }),
    contacts: f.json('contacts', [Contact], {
      nullable: true,
      ...detailed,
      description: 'Further phones and email addresses; null when none are recorded.',
      write: {
        on: 'both',
        input: z.array(contactInput).max(20),
        description: 'Further phones and emails, at most 20; a new list replaces the whole list.',
        byRun: true,
        kinds: ['person'],
      },
    }),
    balance: f.column('balance', 'Float', {
      nullable: true,
      ...detailed,
      description: "The patient's account balance, in the clinic's currency; null when not kept.",
    }),
    id_number: f.column('idNumber', 'String', {
      nullable: true,
      ...detailed,
      description: 'National id number; null when not recorded.',
      write: {
        on: 'both',
        input: identifier(50),
        description: 'National id number, up to 50 characters.',
        kinds: ['person'],
      },
    }),
    ...vet,
  },
});
