import { createdAt, updatedAt } from '../../record-times.ts';
import { type Field, f } from '../../resource.ts';

/**
 * The fields every catalog entry has beyond the spec's (issue 16, catalog writes): in the
 * detailed format only, so the lists keep the spec's shape, while a read by id and a write's
 * answer (both detailed) show whether the entry is still offered, and its version for If-Match.
 */
export const entryFields = (): Record<string, Field> => ({
  disabled_at: f.time('disabledAt', {
    nullable: true,
    group: 'detailed',
    description: 'When the entry was disabled: out of its list, still readable by id. null while offered.',
  }),
  created_at: createdAt({ group: 'detailed' }),
  updated_at: updatedAt({ group: 'detailed' }),
});
