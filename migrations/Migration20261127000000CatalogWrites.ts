import { Migration } from '@mikro-orm/migrations';

const TABLES = [
  'branch',
  'appointment_type',
  'appointment_status',
  'treatment_menu_item',
  'provider',
  'billing_account',
  'species',
  'breed',
  'vaccine',
  'measurement',
];

/**
 * Catalog writes (issue 16): each entry of a written catalog list gets its timestamps (the
 * If-Match version) and `disabled_at` (a disabled entry leaves its list, stays readable by id).
 * Existing entries are dated at the migration.
 */
export class Migration20261127000000CatalogWrites extends Migration {
  override up(): void {
    for (const t of TABLES)
      this.addSql(
        `alter table "${t}" add column "disabled_at" timestamptz null, add column "created_at" timestamptz not null default now(), add column "updated_at" timestamptz not null default now()`,
      );
  }

  override down(): void {
    for (const t of TABLES)
      this.addSql(
        `alter table "${t}" drop column "disabled_at", drop column "created_at", drop column "updated_at"`,
      );
  }
}
