import { Migration } from '@mikro-orm/migrations';

/**
 * Calls (issue 16):
 * - `call.recording_mime`: the sniffed type of the recording the service keeps (the signed
 *   link's answer names it, and the link serves it);
 * - GET /v1/calls reads a clinic's calls newest first by started_at: an index on
 *   (clinic_id, started_at, id) serves that keyset.
 */
export class Migration20261127000001Calls extends Migration {
  override up(): void {
    this.addSql('alter table "call" add column "recording_mime" varchar(255) null');
    this.addSql(
      'create index "call_clinic_id_started_at_id_index" on "call" ("clinic_id", "started_at", "id")',
    );
  }

  override down(): void {
    this.addSql('drop index "call_clinic_id_started_at_id_index"');
    this.addSql('alter table "call" drop column "recording_mime"');
  }
}
