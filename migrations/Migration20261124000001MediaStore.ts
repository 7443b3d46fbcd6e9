import { Migration } from '@mikro-orm/migrations';

/**
 * The media store (src/media/store.ts, entity MediaObject): the bytes of every file the service
 * keeps, in PostgreSQL so any instance serves any signed link. `bytes` is stored EXTERNAL: JPEG,
 * PNG and PDF are compressed already, so TOAST keeps them out of line without trying to compress
 * them again.
 */
export class Migration20261124000001MediaStore extends Migration {
  override up(): void {
    this.addSql(
      'create table "media_object" ("id" serial primary key, "clinic_id" int not null, "mime" varchar(255) not null, "size" int not null, "sha256" varchar(64) not null, "bytes" bytea not null, "created_at" timestamptz not null)',
    );
    this.addSql('alter table "media_object" alter column "bytes" set storage external');
    this.addSql('create index "media_object_clinic_id_index" on "media_object" ("clinic_id")');
    this.addSql(
      'alter table "media_object" add constraint "media_object_clinic_id_foreign" foreign key ("clinic_id") references "clinic" ("id")',
    );
  }

  override down(): void {
    this.addSql('drop table "media_object"');
  }
}
