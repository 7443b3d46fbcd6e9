import { defineResource, f } from '../../resource.ts';
import { idOf, z } from '../../write-input.ts';
import { entryFields } from './entry-fields.ts';
import { code, label, price } from './entry-inputs.ts';

export const Vaccine = defineResource({
  name: 'Vaccine',
  kind: 'Vaccine',
  scopes: ['catalog:read', 'vaccines:read'],
  description: 'A vaccine the clinic gives (veterinary clinics).',
  fields: {
    id: f.id({ description: 'The vaccine id (vac_…).' }),
    name: f.column('name', 'String', { description: 'Its name.', write: { on: 'both', input: label } }),
    code: f.column('code', 'String', {
      nullable: true,
      description: 'Its code; null when it has none.',
      write: { on: 'both', input: code },
    }),
    species_id: f.ref('species', 'Species', {
      nullable: true,
      description: 'The species it is for (spc_…); null when not tied to one.',
      write: { on: 'both', input: idOf('Species') },
    }),
    interval_months: f.column('intervalMonths', 'Int', {
      nullable: true,
      description: 'Months until it is due again; null when it is not repeated.',
      write: {
        on: 'both',
        input: z.number().int().min(1).max(600).meta({ description: 'Months until the next dose.' }),
      },
    }),
    next_vaccine_id: f.ref('nextVaccine', 'Vaccine', {
      nullable: true,
      description: 'The vaccine due after it (vac_…); null when none.',
      write: { on: 'both', input: idOf('Vaccine') },
    }),
    price: f.column('price', 'Float', {
      nullable: true,
      description: "Its price, in the clinic's currency; null when none.",
      write: { on: 'both', input: price },
    }),
    batch_required: f.column('batchRequired', 'Boolean', {
      description: 'Whether giving it must record a batch number.',
      write: {
        on: 'both',
        input: z.boolean().meta({ description: 'Whether a batch number must be recorded (default false).' }),
        // Left out of a creation: false (catalog-bodies.ts).
        create: 'optional',
      },
    }),
    ...entryFields(),
  },
});
