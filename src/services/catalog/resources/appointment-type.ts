import { defineResource, f } from '../../resource.ts';
import { color, z } from '../../write-input.ts';
import { entryFields } from './entry-fields.ts';
import { label } from './entry-inputs.ts';

export const AppointmentTypeItem = defineResource({
  name: 'AppointmentTypeItem',
  kind: 'AppointmentType',
  scopes: ['catalog:read'],
  description: 'A kind of appointment the clinic books, with its default duration.',
  fields: {
    id: f.id({ description: 'The appointment type id (apt_…).' }),
    name: f.column('name', 'String', {
      description: 'Its name, e.g. Checkup.',
      write: { on: 'both', input: label },
    }),
    duration_minutes: f.column('durationMinutes', 'Int', {
      description: 'Default duration.',
      write: {
        on: 'both',
        input: z
          .number()
          .int()
          .min(5)
          .max(1440)
          .meta({ description: 'Default duration, 5 to 1440 minutes.' }),
      },
    }),
    color: f.column('color', 'String', {
      nullable: true,
      description: 'Display color (#rrggbb); null when none.',
      write: { on: 'both', input: color },
    }),
    ...entryFields(),
  },
});
