import { defineResource, f } from '../../resource.ts';
import { entryFields } from './entry-fields.ts';

export const Vaccine = defineResource({
  name: 'Vaccine',
  kind: 'Vaccine',
  scopes: ['catalog:read', 'vaccines:read'],
  description: 'A vaccine the clinic gives (veterinary clinics).',
  fields: {
    id: f.id({ description: 'The vaccine id (vac_…).' }),
    name: f.column('name', 'String', { description: 'Its name.' }),
    code: f.column('code', 'String', { nullable: true, description: 'Its code; null when it has none.' }),
    species_id: f.ref('species', 'Species', {
      nullable: true,
      description: 'The species it is for (spc_…); null when not tied to one.',
    }),
    interval_months: f.column('intervalMonths', 'Int', {
      nullable: true,
      description: 'Months until it is due again; null when it is not repeated.',
    }),
    next_vaccine_id: f.ref('nextVaccine', 'Vaccine', {
      nullable: true,
      description: 'The vaccine due after it (vac_…); null when none.',
    }),
    price: f.column('price', 'Float', {
      nullable: true,
      description: "Its price, in the clinic's currency; null when none.",
    }),
    batch_required: f.column('batchRequired', 'Boolean', {
      description: 'Whether giving it must record a batch number.',
    }),
    ...entryFields(),
  },
});
