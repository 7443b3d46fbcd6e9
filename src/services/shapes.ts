import { ContactType } from './closed-sets.ts';
import { defineShape, f } from './resource.ts';

/** Small embedded objects that many resources share (their ids take the kind of the joined row). */
export const NamedRef = defineShape(
  'NamedRef',
  {
    id: f.id({ description: "The referenced record's id." }),
    name: f.column('name', 'String', { description: 'Its name.' }),
  },
  'An embedded reference: id and name.',
);

export const StatusRef = defineShape(
  'StatusRef',
  {
    id: f.id({ description: 'The status id.' }),
    name: f.column('name', 'String', { description: 'The status, as the clinic named it.' }),
    color: f.column('color', 'String', { nullable: true, description: 'Its display color (#rrggbb).' }),
  },
  'An embedded status reference: id, name and color.',
);

/** The shape of an address JSON column (docs/decisions.md: line1, line2, city, postal_code, country). */
export const Address = defineShape(
  'Address',
  {
    line1: f.key('line1', 'String', { nullable: true, description: 'Street and number.' }),
    line2: f.key('line2', 'String', {
      nullable: true,
      description: 'More of the address (apartment, floor, building).',
    }),
    city: f.key('city', 'String', { nullable: true, description: 'City or town.' }),
    postal_code: f.key('postal_code', 'String', { nullable: true, description: 'Postal code.' }),
    country: f.key('country', 'String', { nullable: true, description: 'Country code, e.g. IL.' }),
  },
  'A postal address; any part may be null (not recorded).',
);

export const Contact = defineShape(
  'Contact',
  {
    type: f.key('type', 'String', { enum: ContactType }),
    value: f.key('value', 'String', { description: 'The phone number or the email address.' }),
    label: f.key('label', 'String', {
      nullable: true,
      description: 'Whose or which it is, e.g. work; null when none was given.',
    }),
  },
  'A further phone or email address of a patient.',
);
