import { defineResource, f } from '../../resource.ts';
import { text, z } from '../../write-input.ts';
import { entryFields } from './entry-fields.ts';
import { label } from './entry-inputs.ts';

export const Measurement = defineResource({
  name: 'Measurement',
  kind: 'Measurement',
  scopes: ['catalog:read', 'measurements:read'],
  description: 'A measurement staff record at visits, e.g. weight (veterinary clinics).',
  fields: {
    id: f.id({ description: 'The measurement id (msr_…).' }),
    name: f.column('name', 'String', {
      description: 'Its name, e.g. Weight.',
      write: { on: 'both', input: label },
    }),
    unit: f.column('unit', 'String', {
      nullable: true,
      description: 'Its unit, e.g. kg; null when none.',
      write: { on: 'both', input: text(16).meta({ description: 'e.g. kg, °C.' }) },
    }),
    is_required: f.column('isRequired', 'Boolean', {
      description: 'Whether a visit must record it.',
      write: {
        on: 'both',
        input: z.boolean().meta({ description: 'Whether every visit records it (default false).' }),
        // Left out of a creation: false (catalog-bodies.ts).
        create: 'optional',
      },
    }),
    ...entryFields(),
  },
});
