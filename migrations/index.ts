import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261122000000Initial } from './Migration20261122000000Initial.ts';

/** Listed explicitly so migrations load the same way under Node, vitest and the CLI. */
export const migrationsList: MigrationObject[] = [
  { name: 'Migration20261122000000Initial', class: Migration20261122000000Initial },
];
