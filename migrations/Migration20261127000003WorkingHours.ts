import { Migration } from '@mikro-orm/migrations';

/**
 * Providers' weekly working hours (issue 16, availability): one row per interval, wall-clock
 * minutes after the clinic's local midnight on an ISO weekday. The checks and the exclusion
 * constraint say in the database what the write validates (docs/decisions.md): a valid weekday,
 * 0 ≤ start < end ≤ 1440, and no two intervals of one provider's day overlap (back to back is
 * no overlap), whatever the branch. Its GiST index also serves the reads by provider.
 */
export class Migration20261127000003WorkingHours extends Migration {
  override up(): void {
    this.addSql(
      `create table "working_hours" ("id" serial primary key, "clinic_id" int not null, "provider_id" int not null, "branch_id" int not null, "weekday" int not null, "start_minute" int not null, "end_minute" int not null,
        constraint "working_hours_weekday_check" check ("weekday" >= 1 and "weekday" <= 7),
        constraint "working_hours_minutes_check" check ("start_minute" >= 0 and "start_minute" < "end_minute" and "end_minute" <= 1440))`,
    );
    this.addSql('create index "working_hours_clinic_id_index" on "working_hours" ("clinic_id")');
    this.addSql(
      'alter table "working_hours" add constraint "working_hours_clinic_id_foreign" foreign key ("clinic_id") references "clinic" ("id")',
    );
    this.addSql(
      'alter table "working_hours" add constraint "working_hours_provider_id_foreign" foreign key ("provider_id") references "provider" ("id")',
    );
    this.addSql(
      'alter table "working_hours" add constraint "working_hours_branch_id_foreign" foreign key ("branch_id") references "branch" ("id")',
    );
    this.addSql(
      `alter table "working_hours" add constraint "working_hours_no_overlap" exclude using gist ("provider_id" with =, "weekday" with =, int4range("start_minute", "end_minute") with &&)`,
    );
  }

  override down(): void {
    this.addSql('drop table if exists "working_hours"');
  }
}
