import { Migration } from '@mikro-orm/migrations';

/**
 * The auto-disable rule counts a failure streak, not time without a success (issue 25): a
 * failure further than a quiet gap from the one before it starts a new streak, so the time of the
 * latest failure is kept (`last_failure_at`). A streak under way keeps going: its latest failure
 * is its latest failed attempt's record (written when the attempt ended).
 */
export class Migration20261201000000WebhookLastFailure extends Migration {
  override up(): void {
    this.addSql('alter table "webhook_subscription" add column "last_failure_at" timestamptz null');
    this.addSql(
      `update "webhook_subscription" as "s" set "last_failure_at" = (
         select max("d"."created_at") from "webhook_delivery" as "d"
         where "d"."subscription_id" = "s"."id" and "d"."status" = 'failed')
       where "s"."failing_since" is not null`,
    );
  }

  override down(): void {
    this.addSql('alter table "webhook_subscription" drop column "last_failure_at"');
  }
}
