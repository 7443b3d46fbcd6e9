import { defineResource, f } from '../../resource.ts';
import { entryFields } from './entry-fields.ts';

export const Vaccine = defineResource({
  name: 'Vaccine',
  kind: 'Vaccine',
  scopes: ['catalog:read', 'vaccines:read'],
  fields: {
    id: f.id(),
    name: f.column('name', 'String'),
    code: f.column('code', 'String', { nullable: true }),
    species_id: f.ref('species', 'Species', { nullable: true }),
    interval_months: f.column('intervalMonths', 'Int', { nullable: true }),
    next_vaccine_id: f.ref('nextVaccine', 'Vaccine', { nullable: true }),
    price: f.column('price', 'Float', { nullable: true }),
    batch_required: f.column('batchRequired', 'Boolean'),
    ...entryFields(),
  },
});
