import { defineResource, f } from '../../resource.ts';
import { entryFields } from './entry-fields.ts';

export const Measurement = defineResource({
  name: 'Measurement',
  kind: 'Measurement',
  scopes: ['catalog:read', 'measurements:read'],
  description: 'A measurement staff record at visits, e.g. weight (veterinary clinics).',
  fields: {
    id: f.id({ description: 'The measurement id (msr_…).' }),
    name: f.column('name', 'String', { description: 'Its name, e.g. Weight.' }),
    unit: f.column('unit', 'String', { nullable: true, description: 'Its unit, e.g. kg; null when none.' }),
    is_required: f.column('isRequired', 'Boolean', { description: 'Whether a visit must record it.' }),
    ...entryFields(),
  },
});
