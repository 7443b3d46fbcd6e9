import { Migration } from '@mikro-orm/migrations';

/**
 * The clinic's writes (issue 16):
 * - a provider's active appointments never overlap: an exclusion constraint on the provider and
 *   the booked time range (btree_gist gives `=` on the provider id inside a GiST index), so of
 *   two concurrent bookings of one slot exactly one commits. Cancelled ones are outside it: a
 *   cancellation frees the slot. Existing overlapping bookings make this migration fail, naming
 *   the constraint: they are the clinic's to resolve (docs/decisions.md).
 * - `appointment.cancellation_reason`, `treatment.cancellation_reason`.
 */
export class Migration20261126000000Writes extends Migration {
  override up(): void {
    this.addSql('create extension if not exists btree_gist');
    this.addSql(
      `alter table "appointment" add constraint "appointment_no_overlap" exclude using gist ("provider_id" with =, tstzrange("start_at", "end_at") with &&) where ("cancelled_at" is null)`,
    );
    this.addSql('alter table "appointment" add column "cancellation_reason" text null');
    this.addSql('alter table "treatment" add column "cancellation_reason" text null');
  }

  override down(): void {
    this.addSql('alter table "treatment" drop column "cancellation_reason"');
    this.addSql('alter table "appointment" drop column "cancellation_reason"');
    this.addSql('alter table "appointment" drop constraint "appointment_no_overlap"');
  }
}
