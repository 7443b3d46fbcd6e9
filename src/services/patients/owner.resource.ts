import { toLocal } from '../../lib/phone.ts';
import { defineResource, f } from '../resource.ts';

/** An animal's owner at a veterinary clinic; embedded in patients with include=owner. */
export const Owner = defineResource({
  name: 'Owner',
  kind: 'Owner',
  // Only ever embedded in a patient, whose scope covers it.
  scopes: [],
  description: "An animal's owner at a veterinary clinic.",
  fields: {
    id: f.id(),
    first_name: f.column('firstName', 'String', { nullable: true }),
    last_name: f.column('lastName', 'String', { nullable: true }),
    phone: f.column('phone', 'String', { nullable: true, convert: (v, pc) => toLocal(v, pc.country) }),
    email: f.column('email', 'String', { nullable: true }),
  },
});
