import { Migration } from '@mikro-orm/migrations';

/**
 * The outbox read back and its retention (issue 16, docs/limits.md, Events):
 * - `event (clinic_id, type, created_at, id)`: GET /v1/events?type=… pages by its order;
 * - `event (created_at)`: the retention sweep deletes the oldest events of every clinic;
 * - `webhook_delivery.event_id` is deleted with its event (ON DELETE CASCADE) and indexed, so
 *   deleting a batch of events finds their deliveries without scanning the delivery log.
 */
export class Migration20261127000002Events extends Migration {
  override up(): void {
    this.addSql(
      'create index "event_clinic_id_type_created_at_id_index" on "event" ("clinic_id", "type", "created_at", "id")',
    );
    this.addSql('create index "event_created_at_index" on "event" ("created_at")');
    this.addSql('create index "webhook_delivery_event_id_index" on "webhook_delivery" ("event_id")');
    this.addSql('alter table "webhook_delivery" drop constraint "webhook_delivery_event_id_foreign"');
    this.addSql(
      'alter table "webhook_delivery" add constraint "webhook_delivery_event_id_foreign" foreign key ("event_id") references "event" ("id") on delete cascade',
    );
  }

  override down(): void {
    this.addSql('alter table "webhook_delivery" drop constraint "webhook_delivery_event_id_foreign"');
    this.addSql(
      'alter table "webhook_delivery" add constraint "webhook_delivery_event_id_foreign" foreign key ("event_id") references "event" ("id")',
    );
    this.addSql('drop index "webhook_delivery_event_id_index"');
    this.addSql('drop index "event_created_at_index"');
    this.addSql('drop index "event_clinic_id_type_created_at_id_index"');
  }
}
