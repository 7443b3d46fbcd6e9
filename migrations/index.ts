import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261122000000Initial } from './Migration20261122000000Initial.ts';
import { Migration20261123000000RateLimit } from './Migration20261123000000RateLimit.ts';
import { Migration20261124000000Chat } from './Migration20261124000000Chat.ts';
import { Migration20261124000001MediaStore } from './Migration20261124000001MediaStore.ts';
import { Migration20261125000000CallbackHardening } from './Migration20261125000000CallbackHardening.ts';
import { Migration20261126000000Writes } from './Migration20261126000000Writes.ts';
import { Migration20261127000000CatalogWrites } from './Migration20261127000000CatalogWrites.ts';
import { Migration20261127000001Calls } from './Migration20261127000001Calls.ts';
import { Migration20261127000002Events } from './Migration20261127000002Events.ts';
import { Migration20261127000003WorkingHours } from './Migration20261127000003WorkingHours.ts';
import { Migration20261128000000DeliveryLog } from './Migration20261128000000DeliveryLog.ts';
import { Migration20261128000001CallPatientIndex } from './Migration20261128000001CallPatientIndex.ts';
import { Migration20261129000000EventNotify } from './Migration20261129000000EventNotify.ts';
import { Migration20261129000010WebhookFailingSince } from './Migration20261129000010WebhookFailingSince.ts';
import { Migration20261130000000MediaReferences } from './Migration20261130000000MediaReferences.ts';
import { Migration20261201000000WebhookLastFailure } from './Migration20261201000000WebhookLastFailure.ts';
import { Migration20261202000000IdempotencyKeyHash } from './Migration20261202000000IdempotencyKeyHash.ts';
import { Migration20261203000000WebhookManagement } from './Migration20261203000000WebhookManagement.ts';
import { Migration20261204000000ClinicMode } from './Migration20261204000000ClinicMode.ts';
import { Migration20261205000000ShardReady } from './Migration20261205000000ShardReady.ts';
import { Migration20261205000010WebsocketHolds } from './Migration20261205000010WebsocketHolds.ts';

/** Listed explicitly so migrations load the same way under Node, vitest and the CLI. */
export const migrationsList: MigrationObject[] = [
  { name: 'Migration20261122000000Initial', class: Migration20261122000000Initial },
  { name: 'Migration20261123000000RateLimit', class: Migration20261123000000RateLimit },
  { name: 'Migration20261124000000Chat', class: Migration20261124000000Chat },
  { name: 'Migration20261124000001MediaStore', class: Migration20261124000001MediaStore },
  { name: 'Migration20261125000000CallbackHardening', class: Migration20261125000000CallbackHardening },
  { name: 'Migration20261126000000Writes', class: Migration20261126000000Writes },
  { name: 'Migration20261127000000CatalogWrites', class: Migration20261127000000CatalogWrites },
  { name: 'Migration20261127000001Calls', class: Migration20261127000001Calls },
  { name: 'Migration20261127000002Events', class: Migration20261127000002Events },
  { name: 'Migration20261127000003WorkingHours', class: Migration20261127000003WorkingHours },
  { name: 'Migration20261128000000DeliveryLog', class: Migration20261128000000DeliveryLog },
  { name: 'Migration20261128000001CallPatientIndex', class: Migration20261128000001CallPatientIndex },
  { name: 'Migration20261129000000EventNotify', class: Migration20261129000000EventNotify },
  { name: 'Migration20261129000010WebhookFailingSince', class: Migration20261129000010WebhookFailingSince },
  { name: 'Migration20261130000000MediaReferences', class: Migration20261130000000MediaReferences },
  { name: 'Migration20261201000000WebhookLastFailure', class: Migration20261201000000WebhookLastFailure },
  { name: 'Migration20261202000000IdempotencyKeyHash', class: Migration20261202000000IdempotencyKeyHash },
  { name: 'Migration20261203000000WebhookManagement', class: Migration20261203000000WebhookManagement },
  { name: 'Migration20261204000000ClinicMode', class: Migration20261204000000ClinicMode },
  { name: 'Migration20261205000000ShardReady', class: Migration20261205000000ShardReady },
  { name: 'Migration20261205000010WebsocketHolds', class: Migration20261205000010WebsocketHolds },
];
