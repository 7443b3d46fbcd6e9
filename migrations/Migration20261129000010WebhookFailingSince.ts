import { Migration } from '@mikro-orm/migrations';

/**
 * Webhook delivery (issue 17): `failing_since`, the first failed attempt with no success after
 * it, so the auto-disable rule (every attempt failed for WEBHOOK_DISABLE_AFTER_HOURS) is one
 * comparison; a success sets it back to null. `url` as text: the API takes up to 2048 characters.
 */
export class Migration20261129000010WebhookFailingSince extends Migration {
  override up(): void {
    this.addSql(
      'alter table "webhook_subscription" add column "failing_since" timestamptz null, alter column "url" type text',
    );
  }

  override down(): void {
    this.addSql(
      'alter table "webhook_subscription" drop column "failing_since", alter column "url" type varchar(255)',
    );
  }
}
