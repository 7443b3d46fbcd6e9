import { Owner, Patient as PatientEntity } from '../../entities/index.ts';
import { invalid } from '../../lib/errors.ts';
import { clinicRef } from '../clinic-ref.ts';
import { addressOf, phoneOf } from '../contact-input.ts';
import type { z } from '../write-input.ts';
import { createInputOf, updateInputOf } from '../write-inputs-of.ts';
import { defineWrite, type WriteContext, type Written } from '../writes.ts';
import { Client } from './client.resource.ts';
import { Patient } from './patient.resource.ts';
import { ANIMAL_GROUPS, copyOwnerContact } from './patient-writes.ts';

/**
 * Clients (animals' owners) of veterinary clinics. A client has no event of its own: its animals
 * embed it (include=owner) and carry its phone and email, so a change to a client updates each
 * animal's copy and records animal.updated for each, with the animal as GET /v1/animals/{id}
 * (detailed, include=owner,species) shows it.
 */
export const createClientInput = createInputOf(Client);
export const updateClientInput = updateInputOf(Client);

async function applyClient(w: WriteContext, o: Owner, input: Partial<z.output<typeof updateClientInput>>) {
  w.setFields(o, input);
  if (input.first_name !== undefined) o.firstName = input.first_name;
  if (input.last_name !== undefined) o.lastName = input.last_name;
  if (!o.firstName && !o.lastName) throw invalid('first_name', 'A client needs a first_name or a last_name.');
  if (input.phone !== undefined) o.phone = phoneOf(w, input.phone, 'phone');
  if (input.email !== undefined) o.email = input.email;
  if (input.address !== undefined) o.address = addressOf(input.address);
}

const scope = {
  tag: 'Clients',
  scopes: ['patients:write'],
  resource: Client,
  clinicKinds: ['veterinary'],
  // No client.* event exists; a change shows in its animals' animal.updated (see `also`).
  event: undefined,
} as const;

export const createClient = defineWrite({
  ...scope,
  scopes: [...scope.scopes],
  name: 'createClient',
  method: 'POST',
  path: '/clients',
  status: 201,
  summary: 'Add a client',
  description:
    'Veterinary clinics: an owner, to whom animals are then added (POST /v1/animals). A first_name or a last_name is required. Records no event (a client without animals appears in none).',
  input: createClientInput,
  example: {
    first_name: 'Noa',
    last_name: 'Levi',
    phone: '054-123-0000',
    email: 'noa@example.com',
    address: { line1: '5 Rothschild Blvd', city: 'Tel Aviv', postal_code: '6688101', country: 'IL' },
  },
  async run(w, input) {
    const o = w.em.create(Owner, {
      clinic: clinicRef(w),
      firstName: null,
      lastName: null,
      phone: null,
      email: null,
      address: null,
    });
    await applyClient(w, o, input);
    await w.em.flush();
    return o.id;
  },
});

export const updateClient = defineWrite({
  ...scope,
  scopes: [...scope.scopes],
  name: 'updateClient',
  method: 'PATCH',
  path: '/clients/:id',
  ids: { id: 'Owner' },
  status: 200,
  summary: 'Change a client',
  description:
    "Veterinary clinics. Absent fields are kept, null clears one. The client's phone and email are copied to each of its animals, and each animal records animal.updated.",
  input: updateClientInput,
  example: { phone: '052-765-4321', email: null },
  async run(w, input, id): Promise<Written> {
    const o = await w.load(Owner, 'Owner', id);
    await applyClient(w, o, input);
    const animals = await w.em.find(PatientEntity, { owner: o }, { orderBy: { id: 'asc' } });
    for (const a of animals) copyOwnerContact(a, o);
    return {
      id: o.id,
      also: animals.map((a) => ({
        type: 'animal.updated',
        resource: Patient,
        id: a.id,
        groups: ANIMAL_GROUPS,
      })),
    };
  },
});
