import { ContactType } from './closed-sets.ts';
import { defineShape, f } from './resource.ts';

/** Small embedded objects that many resources share (their ids take the kind of the joined row). */
export const NamedRef = defineShape(
  'NamedRef',
  { id: f.id(), name: f.column('name', 'String') },
  'An embedded reference: id and name.',
);

export const StatusRef = defineShape(
  'StatusRef',
  { id: f.id(), name: f.column('name', 'String'), color: f.column('color', 'String', { nullable: true }) },
  'An embedded status reference: id, name and color.',
);

/** The shape of an address JSON column (docs/decisions.md: line1, line2, city, postal_code, country). */
export const Address = defineShape('Address', {
  line1: f.key('line1', 'String', { nullable: true }),
  line2: f.key('line2', 'String', { nullable: true }),
  city: f.key('city', 'String', { nullable: true }),
  postal_code: f.key('postal_code', 'String', { nullable: true }),
  country: f.key('country', 'String', { nullable: true }),
});

export const Contact = defineShape('Contact', {
  type: f.key('type', 'String', { enum: ContactType }),
  value: f.key('value', 'String'),
  label: f.key('label', 'String', { nullable: true }),
});
