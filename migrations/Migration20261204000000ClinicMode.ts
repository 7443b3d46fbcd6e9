import { Migration } from '@mikro-orm/migrations';

/**
 * Test mode per clinic (issue 29, docs/test-mode.md). Clinics that exist already become live
 * clinics: a clinic with real patients must never be switched to the sandbox network by an
 * upgrade (its messages would silently stop reaching anyone). The mode has no default, so every
 * clinic created from now on was given one on purpose.
 */
export class Migration20261204000000ClinicMode extends Migration {
  override up(): void {
    this.addSql(
      `alter table "clinic" add column "mode" text not null default 'live' check ("mode" in ('test', 'live'))`,
    );
    this.addSql('alter table "clinic" alter column "mode" drop default');
  }

  override down(): void {
    this.addSql('alter table "clinic" drop column "mode"');
  }
}
