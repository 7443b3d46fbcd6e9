import { toLocal } from '../../lib/phone.ts';
import { defineResource, f } from '../resource.ts';
import { personFields } from './person-fields.ts';

/** An animal's owner at a veterinary clinic; embedded in patients with include=owner. */
export const Owner = defineResource({
  name: 'Owner',
  kind: 'Owner',
  // Only ever embedded in a patient, whose scope covers it.
  scopes: [],
  description: "An animal's owner at a veterinary clinic.",
  fields: {
    id: f.id({ description: 'The client id (own_…), as GET /v1/clients shows it.' }),
    first_name: personFields.first_name,
    last_name: personFields.last_name,
    phone: f.column('phone', 'String', {
      nullable: true,
      convert: (v, pc) => toLocal(v, pc.country),
      description: 'Phone, local form (e.g. 0501234567); null when not recorded.',
    }),
    email: personFields.email,
  },
});
