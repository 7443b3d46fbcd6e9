import { Breed, Owner, Patient as PatientEntity, PatientStatus, Species } from '../../entities/index.ts';
import type { Contact } from '../../entities/patient.ts';
import { invalid } from '../../lib/errors.ts';
import { clinicRef } from '../clinic-ref.ts';
import { addressOf, phoneOf } from '../contact-input.ts';
import { restGroups } from '../resource.ts';
import { idOf, name, type z } from '../write-input.ts';
import { createInputOf, updateInputOf } from '../write-inputs-of.ts';
import { defineWrite, type WriteContext } from '../writes.ts';
import { type contactInput, Patient } from './patient.resource.ts';
import { NAME_MAX } from './person-fields.ts';
import { foldedNames } from './search-columns.ts';

/**
 * Patients of dental clinics and animals of veterinary ones: both are Patient rows, written by
 * separate routes (POST /v1/patients exists at dental clinics only, /v1/animals at veterinary
 * ones). Every write of a name sets the folded search columns, every write of an email its
 * lower-cased copy, and phones are stored in E.164 read with the clinic's country, so the
 * searches of GET /v1/patients find what the API wrote.
 */

/** A dental patient's fields: those of the definition whose write names no kind, or 'person'. */
export const createPatientInput = createInputOf(Patient, {}, 'person');
export const updatePatientInput = updateInputOf(Patient, {}, 'person');

const emailColumns = (email: string | null) => ({ email, emailLower: email?.toLowerCase() ?? null });

function contactsOf(w: WriteContext, list: z.output<typeof contactInput>[] | null): Contact[] | null {
  if (list == null) return null;
  return list.map((c, i) => ({
    type: c.type,
    // Phone contacts are stored in E.164 (as seeded ones are), so one number reads the same everywhere.
    value: c.type === 'phone' ? (phoneOf(w, c.value, `contacts[${i}].value`) as string) : c.value,
    label: c.label ?? null,
  }));
}

/**
 * A birth date is not in the future: not after the latest calendar date anywhere on Earth
 * (UTC+14) at the write's time, so no clinic's today is refused (docs/decisions.md: dates).
 */
function bornBy(w: WriteContext, birthDate: string | null): string | null {
  const latest = new Date(w.now.getTime() + 14 * 3600_000).toISOString().slice(0, 10);
  if (birthDate && birthDate > latest) throw invalid('birth_date', 'birth_date must not be in the future.');
  return birthDate;
}

type PatientChanges = Partial<z.output<typeof updatePatientInput>>;

/** Applies the fields a body holds (absent keeps, null clears) to a dental patient. */
async function applyPatient(w: WriteContext, p: PatientEntity, input: PatientChanges) {
  w.setFields(p, input);
  if (input.first_name !== undefined) p.firstName = input.first_name;
  if (input.last_name !== undefined) p.lastName = input.last_name;
  if (!p.firstName && !p.lastName)
    throw invalid('first_name', 'A patient needs a first_name or a last_name.');
  Object.assign(p, foldedNames(p.firstName, p.lastName));
  if (input.phone !== undefined) p.phone = phoneOf(w, input.phone, 'phone');
  if (input.email !== undefined) Object.assign(p, emailColumns(input.email));
  if (input.birth_date !== undefined) p.birthDate = bornBy(w, input.birth_date);
  if (input.status_id !== undefined)
    p.status = input.status_id === null ? null : await w.ref(PatientStatus, input.status_id, 'status_id');
  if (input.address !== undefined) p.address = addressOf(input.address);
  if (input.contacts !== undefined) p.contacts = contactsOf(w, input.contacts);
}

/** The columns a new Patient row starts with; the write's fields follow. */
const blankPatient = (w: WriteContext) => ({
  clinic: clinicRef(w),
  firstName: null,
  lastName: null,
  phone: null,
  email: null,
  emailLower: null,
  gender: null,
  birthDate: null,
  status: null,
  address: null,
  contacts: null,
  balance: null,
  idNumber: null,
  owner: null,
  species: null,
  breed: null,
});

const patientExample = {
  first_name: 'Dana',
  last_name: 'Cohen',
  phone: '050-123-4567',
  email: 'dana@example.com',
  gender: 'female',
  birth_date: '1990-05-01',
  address: { line1: '5 Rothschild Blvd', city: 'Tel Aviv', postal_code: '6688101', country: 'IL' },
  contacts: [{ type: 'phone', value: '03-555-0100', label: 'work' }],
};

export const createPatient = defineWrite({
  name: 'createPatient',
  method: 'POST',
  path: '/patients',
  status: 201,
  tag: 'Patients',
  summary: 'Create a patient',
  description:
    'Dental clinics (at veterinary ones, POST /v1/clients and /v1/animals). A first_name or a last_name is required. Records patient.created.',
  scopes: ['patients:write'],
  input: createPatientInput,
  example: patientExample,
  resource: Patient,
  clinicKinds: ['dental'],
  event: 'patient.created',
  async run(w, input) {
    const p = w.em.create(PatientEntity, { ...blankPatient(w), ...foldedNames(null, null) });
    await applyPatient(w, p, input);
    await w.em.flush();
    return p.id;
  },
});

export const updatePatient = defineWrite({
  name: 'updatePatient',
  method: 'PATCH',
  path: '/patients/:id',
  ids: { id: 'Patient' },
  status: 200,
  tag: 'Patients',
  summary: 'Change a patient',
  description:
    'Dental clinics. Absent fields are kept, null clears one; a patient keeps a first_name or a last_name. Records patient.updated.',
  scopes: ['patients:write'],
  input: updatePatientInput,
  example: { phone: '052-765-4321', status_id: 'pst_1', address: null },
  resource: Patient,
  clinicKinds: ['dental'],
  event: 'patient.updated',
  async run(w, input, id) {
    const p = await w.load(PatientEntity, 'Patient', id);
    await applyPatient(w, p, input);
    return p.id;
  },
});

// ---------- animals (veterinary) ----------

/** An animal is presented with its owner and species, in the answer and in its events' data. */
export const ANIMAL_GROUPS = restGroups(true, ['owner', 'species']);

// An animal has a name, always (a person may have a last name instead).
const animalName = name(NAME_MAX).meta({ description: "The animal's name." });

/** An animal's fields: those whose write names no kind, or 'animal'. */
export const createAnimalInput = createInputOf(Patient, { first_name: animalName }, 'animal');

export const updateAnimalInput = updateInputOf(
  Patient,
  // As published, the change's client_id says only what an id it takes.
  { client_id: idOf('Owner').optional(), first_name: animalName.optional() },
  'animal',
);

/** Animals carry their owner's phone and email, so phone and email search find them. */
export function copyOwnerContact(a: PatientEntity, owner: Owner) {
  a.phone = owner.phone ?? null;
  Object.assign(a, emailColumns(owner.email ?? null));
}

async function applyAnimal(
  w: WriteContext,
  a: PatientEntity,
  input: Partial<z.output<typeof updateAnimalInput>>,
) {
  if (input.client_id !== undefined) {
    a.owner = await w.ref(Owner, input.client_id, 'client_id');
    copyOwnerContact(a, a.owner);
  }
  if (input.first_name !== undefined) {
    a.firstName = input.first_name;
    Object.assign(a, foldedNames(a.firstName, a.lastName));
  }
  if (input.species_id !== undefined)
    a.species = input.species_id === null ? null : await w.ref(Species, input.species_id, 'species_id');
  if (input.breed_id !== undefined) {
    const breed = input.breed_id === null ? null : await w.ref(Breed, input.breed_id, 'breed_id');
    a.breed = breed;
    // A breed names its species: given alone, it sets the species too.
    if (breed?.species && input.species_id === undefined && !a.species) a.species = breed.species;
  }
  const breedSpecies = a.breed ? (await w.ref(Breed, a.breed.id, 'breed_id')).species?.id : undefined;
  if (a.breed && a.species && breedSpecies !== undefined && breedSpecies !== a.species.id)
    throw invalid(
      input.breed_id !== undefined ? 'breed_id' : 'species_id',
      "breed_id: the breed is not one of the species' breeds.",
    );
  w.setFields(a, input);
  if (input.birth_date !== undefined) a.birthDate = bornBy(w, input.birth_date);
  if (input.status_id !== undefined)
    a.status = input.status_id === null ? null : await w.ref(PatientStatus, input.status_id, 'status_id');
}

export const createAnimal = defineWrite({
  name: 'createAnimal',
  method: 'POST',
  path: '/animals',
  status: 201,
  tag: 'Animals',
  summary: 'Add an animal',
  description:
    "Veterinary clinics: an animal of an existing client (client_id); its phone and email are the client's. A breed_id must be one of species_id's breeds (given alone, it sets the species). Records animal.created; the answer and the event embed owner and species.",
  scopes: ['patients:write'],
  input: createAnimalInput,
  example: {
    client_id: 'own_1',
    first_name: 'Rex',
    species_id: 'spc_1',
    gender: 'male',
    birth_date: '2020-05-01',
  },
  resource: Patient,
  clinicKinds: ['veterinary'],
  groups: () => ANIMAL_GROUPS,
  event: 'animal.created',
  async run(w, input) {
    const a = w.em.create(PatientEntity, { ...blankPatient(w), ...foldedNames(null, null) });
    await applyAnimal(w, a, input);
    await w.em.flush();
    return a.id;
  },
});

export const updateAnimal = defineWrite({
  name: 'updateAnimal',
  method: 'PATCH',
  path: '/animals/:id',
  ids: { id: 'Patient' },
  status: 200,
  tag: 'Animals',
  summary: 'Change an animal',
  description:
    'Veterinary clinics. Absent fields are kept, null clears one; a new client_id moves the animal to that client (and its phone and email). Records animal.updated.',
  scopes: ['patients:write'],
  input: updateAnimalInput,
  example: { first_name: 'Rexy', status_id: 'pst_1' },
  resource: Patient,
  clinicKinds: ['veterinary'],
  groups: () => ANIMAL_GROUPS,
  event: 'animal.updated',
  async run(w, input, id) {
    const a = await w.load(PatientEntity, 'Patient', id);
    await applyAnimal(w, a, input);
    return a.id;
  },
});
