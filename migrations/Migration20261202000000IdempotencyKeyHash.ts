import { Migration } from '@mikro-orm/migrations';

/**
 * Idempotency keys are stored as their SHA-256 (hex), never as sent (issue 26): a key is whatever
 * the client chose, and a client that sends a card number as one must not have it kept in the
 * clear (docs/decisions.md, "Card numbers"). Lookups are by the hash. Existing rows (at most a
 * day of keys) are hashed in place, so their retries still find them.
 */
export class Migration20261202000000IdempotencyKeyHash extends Migration {
  override up(): void {
    this.addSql('drop index "idempotency_key_api_key_id_key_unique"');
    this.addSql('alter table "idempotency_key" rename column "key" to "key_hash"');
    this.addSql(
      `update "idempotency_key" set "key_hash" = encode(sha256(convert_to("key_hash", 'UTF8')), 'hex')`,
    );
    this.addSql('alter table "idempotency_key" alter column "key_hash" type varchar(64)');
    this.addSql(
      'create unique index "idempotency_key_api_key_id_key_hash_unique" on "idempotency_key" ("api_key_id", "key_hash")',
    );
  }

  override down(): void {
    // A hash cannot be turned back into its key: the stored answers go (they protect a day of retries).
    this.addSql('delete from "idempotency_key"');
    this.addSql('drop index "idempotency_key_api_key_id_key_hash_unique"');
    this.addSql('alter table "idempotency_key" alter column "key_hash" type varchar(255)');
    this.addSql('alter table "idempotency_key" rename column "key_hash" to "key"');
    this.addSql(
      'create unique index "idempotency_key_api_key_id_key_unique" on "idempotency_key" ("api_key_id", "key")',
    );
  }
}
