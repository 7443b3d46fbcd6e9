import { Migration } from '@mikro-orm/migrations';

/**
 * The media sweep (src/media/orphans.ts) asks, for each old file, whether a message or a call
 * refers to it: each question one probe of these partial indexes (only rows with a file).
 */
export class Migration20261130000000MediaReferences extends Migration {
  override up(): void {
    this.addSql(
      'create index if not exists "message_clinic_id_media_path_index" on "message" ("clinic_id", "media_path") where "media_path" is not null',
    );
    this.addSql(
      'create index if not exists "call_clinic_id_recording_path_index" on "call" ("clinic_id", "recording_path") where "recording_path" is not null',
    );
  }

  override down(): void {
    this.addSql('drop index if exists "message_clinic_id_media_path_index"');
    this.addSql('drop index if exists "call_clinic_id_recording_path_index"');
  }
}
