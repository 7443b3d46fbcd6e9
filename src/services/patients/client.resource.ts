import { toLocal } from '../../lib/phone.ts';
import { addressInput } from '../contact-input.ts';
import { createdAt, updatedAt } from '../record-times.ts';
import { defineResource, f } from '../resource.ts';
import { Address } from '../shapes.ts';
import { personFields, phoneWrite } from './person-fields.ts';

/**
 * A client (an animal's owner) of a veterinary clinic read on its own: GET /v1/clients and what
 * the client writes answer. `Owner` is the same row embedded in an animal (scopes [], fewer
 * fields); a resource is defined once per name, so the standalone one is named Client.
 */
export const Client = defineResource({
  name: 'Client',
  kind: 'Owner',
  scopes: ['patients:read'],
  description: "A client of a veterinary clinic: its animals' owner.",
  fields: {
    id: f.id({ description: 'The client id (own_…).' }),
    first_name: personFields.first_name,
    last_name: personFields.last_name,
    phone: f.column('phone', 'String', {
      nullable: true,
      convert: (v, pc) => toLocal(v, pc.country),
      description: 'Local form (e.g. 0501234567); copied to each of its animals.',
      write: phoneWrite,
    }),
    email: personFields.email,
    address: f.json('address', Address, {
      nullable: true,
      group: 'detailed',
      description: 'Postal address; null when not recorded.',
      // Stored with every key (addressOf).
      write: { on: 'both', input: addressInput, byRun: true },
    }),
    created_at: createdAt(),
    updated_at: updatedAt(),
  },
});
