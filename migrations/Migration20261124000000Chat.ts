import { Migration } from '@mikro-orm/migrations';

/**
 * The chat inbox (issue 9):
 * - `seq`, the mutation order of conversations and messages (`updated_since` syncs in it). It is
 *   drawn from the clinic's `chat_seq` by `update … returning`, whose row lock is held until the
 *   writing transaction commits, so a clinic's numbers commit in order and a reader never sees
 *   a number after one that is still to commit (docs/chat.md, Incremental sync).
 * - `message.patient_phone` (E.164): the patient side in either direction, the key of the phone
 *   filters and of a patient's messages.
 * - `template.role`: which of the clinic's templates carries media and the free-text fallback.
 * - `idempotency_key`: the responses of POST /v1/chat/messages by Idempotency-Key.
 */
export class Migration20261124000000Chat extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table "clinic" add column "chat_seq" bigint not null default 0');
    // The network's callbacks name the clinic by its messaging number.
    this.addSql('create unique index "clinic_phone_unique" on "clinic" ("phone") where "phone" is not null');
    this.addSql('alter table "conversation" add column "seq" bigint not null default 0');
    this.addSql('alter table "message" add column "seq" bigint not null default 0');
    this.addSql('alter table "message" add column "patient_phone" varchar(255) null');
    this.addSql(
      `update "message" set "patient_phone" = coalesce(case when "direction" = 'inbound' then "from_phone" else "to_phone" end, '')`,
    );
    this.addSql('alter table "message" alter column "patient_phone" set not null');
    this.addSql('alter table "template" add column "role" varchar(255) null');
    this.addSql('drop index if exists "message_clinic_id_updated_at_id_index"');
    this.addSql('create index "conversation_clinic_id_seq_index" on "conversation" ("clinic_id", "seq")');
    this.addSql(
      'create index "conversation_clinic_id_last_activity_at_id_index" on "conversation" ("clinic_id", "last_activity_at" desc nulls last, "id" desc)',
    );
    this.addSql('create index "message_clinic_id_seq_index" on "message" ("clinic_id", "seq")');
    // Where a sync's first page starts (services/chat/keysets.ts, syncStart).
    this.addSql(
      'create index "message_clinic_id_updated_at_seq_index" on "message" ("clinic_id", "updated_at", "seq")',
    );
    this.addSql(
      'create index "conversation_clinic_id_updated_at_seq_index" on "conversation" ("clinic_id", "updated_at", "seq")',
    );
    this.addSql(
      'create index "message_clinic_id_created_at_id_index" on "message" ("clinic_id", "created_at" desc, "id" desc)',
    );
    this.addSql(
      'create index "message_clinic_id_patient_phone_created_at_id_index" on "message" ("clinic_id", "patient_phone", "created_at" desc, "id" desc)',
    );
    this.addSql(
      'create table "idempotency_key" ("id" serial primary key, "clinic_id" int not null references "clinic" ("id"), "api_key_id" varchar(255) not null, "key" varchar(255) not null, "request_hash" varchar(64) not null, "status" int null, "response" jsonb null, "created_at" timestamptz not null)',
    );
    this.addSql(
      'create unique index "idempotency_key_api_key_id_key_unique" on "idempotency_key" ("api_key_id", "key")',
    );
    this.addSql('create index "idempotency_key_created_at_index" on "idempotency_key" ("created_at")');
  }

  override async down(): Promise<void> {
    this.addSql('drop table "idempotency_key"');
    this.addSql('drop index "message_clinic_id_patient_phone_created_at_id_index"');
    this.addSql('drop index "message_clinic_id_created_at_id_index"');
    this.addSql('drop index "message_clinic_id_seq_index"');
    this.addSql('drop index "message_clinic_id_updated_at_seq_index"');
    this.addSql('drop index "conversation_clinic_id_updated_at_seq_index"');
    this.addSql('drop index "conversation_clinic_id_last_activity_at_id_index"');
    this.addSql('drop index "conversation_clinic_id_seq_index"');
    this.addSql(
      'create index "message_clinic_id_updated_at_id_index" on "message" ("clinic_id", "updated_at", "id")',
    );
    this.addSql('alter table "template" drop column "role"');
    this.addSql('alter table "message" drop column "patient_phone"');
    this.addSql('alter table "message" drop column "seq"');
    this.addSql('alter table "conversation" drop column "seq"');
    this.addSql('drop index "clinic_phone_unique"');
    this.addSql('alter table "clinic" drop column "chat_seq"');
  }
}
