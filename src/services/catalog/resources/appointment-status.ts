import { defineResource, f } from '../../resource.ts';
import { color, z } from '../../write-input.ts';
import { entryFields } from './entry-fields.ts';
import { label } from './entry-inputs.ts';

export const AppointmentStatusItem = defineResource({
  name: 'AppointmentStatusItem',
  kind: 'AppointmentStatus',
  scopes: ['catalog:read'],
  description: 'An appointment status the clinic uses (Scheduled, Confirmed, …), in its configured order.',
  fields: {
    id: f.id({ description: 'The status id (aps_…).' }),
    name: f.column('name', 'String', {
      description: 'The status, as the clinic named it.',
      write: { on: 'both', input: label },
    }),
    color: f.column('color', 'String', {
      description: 'Display color (#rrggbb).',
      write: { on: 'both', input: color },
    }),
    enabled: f.column('enabled', 'Boolean', {
      description: 'Whether staff can set it on an appointment.',
      write: {
        on: 'both',
        input: z.boolean().meta({ description: 'Whether staff can set it (default true).' }),
        // Left out of a creation: true (catalog-bodies.ts).
        create: 'optional',
      },
    }),
    ...entryFields(),
  },
});
