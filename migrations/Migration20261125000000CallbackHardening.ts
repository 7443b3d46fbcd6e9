import { Migration } from '@mikro-orm/migrations';

/**
 * The network callback answers every signed body once (issue 15):
 * - `message (clinic_id, network_message_id)` is unique, so copies of one callback delivered at
 *   once record one message. Copies recorded before this migration are merged into the first:
 *   replies to a copy point at the first, then the copies go.
 * - `message.reaction_patient_at`: a patient's reaction is applied in the order of its `at`, so
 *   a replayed or late older reaction does not undo a newer one.
 * - `message.failure_reason` is text: the callback schema takes reasons of up to 1,000
 *   characters, and a network's own error text can be longer than 255.
 */
export class Migration20261125000000CallbackHardening extends Migration {
  override up(): void {
    const copies = `(select "id", min("id") over (partition by "clinic_id", "network_message_id") as "first_id"
        from "message" where "network_message_id" is not null) c`;
    this.addSql(
      `update "message" set "replied_to_id" = c."first_id" from ${copies} where "message"."replied_to_id" = c."id" and c."id" <> c."first_id"`,
    );
    this.addSql(
      `delete from "message" using ${copies} where "message"."id" = c."id" and c."id" <> c."first_id"`,
    );
    this.addSql('drop index if exists "message_network_message_id_index"');
    this.addSql(
      'create unique index "message_clinic_id_network_message_id_unique" on "message" ("clinic_id", "network_message_id")',
    );
    this.addSql('alter table "message" add column "reaction_patient_at" timestamptz null');
    this.addSql('alter table "message" alter column "failure_reason" type text');
  }

  override down(): void {
    this.addSql('alter table "message" alter column "failure_reason" type varchar(255)');
    this.addSql('alter table "message" drop column "reaction_patient_at"');
    this.addSql('drop index "message_clinic_id_network_message_id_unique"');
    this.addSql('create index "message_network_message_id_index" on "message" ("network_message_id")');
  }
}
