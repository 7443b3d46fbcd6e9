import type { RecordList } from '../record-lists.ts';
import { Client } from './client.resource.ts';
import { Patient } from './patient.resource.ts';

/**
 * The veterinary reads: GET /v1/animals (the clinic's patients, which are its animals; the
 * Patient resource, with include=owner,species as GET /v1/patients) and GET /v1/clients (their
 * owners, the Client resource). Top-level record lists, oldest first like GET /v1/patients, with
 * updated_since for incremental sync; a 404 at dental clinics, as the writes of the same paths.
 */
export const animalRecords: RecordList = {
  resource: Patient,
  keyset: { tag: 'anm', idDir: 'asc', id: (r) => r.id },
  timeProp: 'createdAt',
  refs: { client_id: ['owner', 'Owner'], species_id: ['species', 'Species'] },
  clinicKinds: ['veterinary'],
  noun: 'Animals',
};

export const clientRecords: RecordList = {
  resource: Client,
  keyset: { tag: 'own', idDir: 'asc', id: (r) => r.id },
  timeProp: 'createdAt',
  refs: {},
  clinicKinds: ['veterinary'],
  noun: 'Clients',
};
