import { Migration } from '@mikro-orm/migrations';

/**
 * The webhook delivery log as a log of attempts (issue 17; docs/decisions.md, Webhook delivery
 * log): one `webhook_delivery` row per attempt. No worker has written the table yet.
 * - `trigger` (scheduled or manual);
 * - `attempts` → `attempt` (this attempt's number), `last_attempt_at` → `attempted_at` (NOT NULL,
 *   the log's order, default now for rows written without it), `response_body` →
 *   `response_excerpt` (stored already truncated);
 * - the log's index follows its order: (subscription_id, attempted_at, id).
 */
export class Migration20261128000000DeliveryLog extends Migration {
  override up(): void {
    this.addSql(
      `alter table "webhook_delivery" add column "trigger" varchar(255) not null default 'scheduled'`,
    );
    this.addSql('alter table "webhook_delivery" rename column "attempts" to "attempt"');
    this.addSql('alter table "webhook_delivery" alter column "attempt" set default 1');
    this.addSql('alter table "webhook_delivery" rename column "last_attempt_at" to "attempted_at"');
    this.addSql('update "webhook_delivery" set "attempted_at" = "created_at" where "attempted_at" is null');
    this.addSql('alter table "webhook_delivery" alter column "attempted_at" set default current_timestamp');
    this.addSql('alter table "webhook_delivery" alter column "attempted_at" set not null');
    this.addSql('alter table "webhook_delivery" rename column "response_body" to "response_excerpt"');
    this.addSql('drop index "webhook_delivery_subscription_id_created_at_id_index"');
    this.addSql(
      'create index "webhook_delivery_subscription_id_attempted_at_id_index" on "webhook_delivery" ("subscription_id", "attempted_at", "id")',
    );
  }

  override down(): void {
    this.addSql('drop index "webhook_delivery_subscription_id_attempted_at_id_index"');
    this.addSql(
      'create index "webhook_delivery_subscription_id_created_at_id_index" on "webhook_delivery" ("subscription_id", "created_at", "id")',
    );
    this.addSql('alter table "webhook_delivery" rename column "response_excerpt" to "response_body"');
    this.addSql('alter table "webhook_delivery" alter column "attempted_at" drop not null');
    this.addSql('alter table "webhook_delivery" alter column "attempted_at" drop default');
    this.addSql('alter table "webhook_delivery" rename column "attempted_at" to "last_attempt_at"');
    this.addSql('alter table "webhook_delivery" alter column "attempt" set default 0');
    this.addSql('alter table "webhook_delivery" rename column "attempt" to "attempts"');
    this.addSql('alter table "webhook_delivery" drop column "trigger"');
  }
}
