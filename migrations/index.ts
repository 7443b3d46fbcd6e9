import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261122000000Initial } from './Migration20261122000000Initial.ts';
import { Migration20261123000000RateLimit } from './Migration20261123000000RateLimit.ts';
import { Migration20261124000000Chat } from './Migration20261124000000Chat.ts';
import { Migration20261124000001MediaStore } from './Migration20261124000001MediaStore.ts';
import { Migration20261125000000CallbackHardening } from './Migration20261125000000CallbackHardening.ts';
import { Migration20261126000000Writes } from './Migration20261126000000Writes.ts';

/** Listed explicitly so migrations load the same way under Node, vitest and the CLI. */
export const migrationsList: MigrationObject[] = [
  { name: 'Migration20261122000000Initial', class: Migration20261122000000Initial },
  { name: 'Migration20261123000000RateLimit', class: Migration20261123000000RateLimit },
  { name: 'Migration20261124000000Chat', class: Migration20261124000000Chat },
  { name: 'Migration20261124000001MediaStore', class: Migration20261124000001MediaStore },
  { name: 'Migration20261125000000CallbackHardening', class: Migration20261125000000CallbackHardening },
  { name: 'Migration20261126000000Writes', class: Migration20261126000000Writes },
];
