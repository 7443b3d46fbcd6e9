import { Migration } from '@mikro-orm/migrations';

/**
 * Webhooks an integrator manages (issue 29): a subscription's description (PATCH), the secret a
 * rotation replaced with the time it stops signing (rotate-secret's overlap), and the outbox's
 * sample events (POST /v1/webhooks/{id}/test, `cli events trigger`), which are delivered like any
 * other and kept out of the event feeds.
 */
export class Migration20261203000000WebhookManagement extends Migration {
  override up(): void {
    this.addSql(
      `alter table "webhook_subscription"
         add column "description" text null,
         add column "previous_secret" varchar(255) null,
         add column "previous_secret_expires_at" timestamptz null`,
    );
    this.addSql('alter table "event" add column "test" boolean not null default false');
  }

  override down(): void {
    this.addSql('alter table "event" drop column "test"');
    this.addSql(
      `alter table "webhook_subscription"
         drop column "description", drop column "previous_secret", drop column "previous_secret_expires_at"`,
    );
  }
}
