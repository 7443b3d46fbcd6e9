import { Migration } from '@mikro-orm/migrations';

/**
 * Ready to shard by clinic (issue 35, test/shard-ready.test.ts, docs/scale.md). Citus enforces
 * uniqueness within a shard only, so every primary key, unique index and exclusion constraint of
 * a clinic table must include `clinic_id`; and a foreign key between two distributed tables must
 * pair their distribution columns. Until now the keys were on `id` alone and a reference
 * (`patient.owner_id`) named a row by its id alone, so the database let a row point at another
 * clinic's row (the services never did: they check every id under the clinic's filter).
 *
 * - Primary keys become (`id`, `clinic_id`), in that order: a lookup by id alone (MikroORM
 *   updates and deletes `where "id" = ?`, the event relay reads `"id" > ?`, the delivery worker
 *   reads by id) uses the same index as before, one int wider. The entities keep `id` as their
 *   primary key: it is still unique, drawn from its sequence; test/schema-agreement.test.ts lists
 *   the difference.
 * - Every foreign key between clinic tables becomes (`clinic_id`, `x_id`) -> (`clinic_id`, `id`),
 *   under its old name and with its old delete rule; `on delete set null ("x_id")` (PostgreSQL
 *   15) clears the reference only, never the row's clinic. Adding them checks every existing row:
 *   a row pointing at another clinic's row makes this migration fail, naming the constraint.
 * - The exclusion constraints (one provider's bookings, one provider's working hours) compare
 *   `clinic_id` with `=` first; a provider belongs to one clinic, so they refuse what they did.
 * - An Idempotency-Key is unique per (clinic, API key, key): an API key belongs to one clinic,
 *   so the same keys as before.
 *
 * Constraints are rebuilt in the migration's transaction: on a large database the tables are
 * locked while the new primary keys are built and the foreign keys checked (docs/scale.md).
 */

/** Clinic tables, each with an integer `id` primary key named `<table>_pkey`. */
const TABLES = [
  'appointment',
  'appointment_status',
  'appointment_type',
  'billing_account',
  'branch',
  'breed',
  'call',
  'conversation',
  'event',
  'idempotency_key',
  'measurement',
  'media_object',
  'message',
  'owner',
  'patient',
  'patient_status',
  'payment',
  'provider',
  'species',
  'template',
  'treatment',
  'treatment_category',
  'treatment_menu_item',
  'vaccine',
  'webhook_delivery',
  'webhook_subscription',
  'working_hours',
];

/** [table, column, referenced table, on delete]: every foreign key between clinic tables. */
const FOREIGN_KEYS: [string, string, string, 'no action' | 'set null' | 'cascade'][] = [
  ['appointment', 'branch_id', 'branch', 'no action'],
  ['appointment', 'patient_id', 'patient', 'no action'],
  ['appointment', 'provider_id', 'provider', 'set null'],
  ['appointment', 'status_id', 'appointment_status', 'set null'],
  ['appointment', 'type_id', 'appointment_type', 'set null'],
  ['breed', 'species_id', 'species', 'set null'],
  ['call', 'patient_id', 'patient', 'set null'],
  ['message', 'conversation_id', 'conversation', 'no action'],
  ['message', 'replied_to_id', 'message', 'set null'],
  ['patient', 'breed_id', 'breed', 'set null'],
  ['patient', 'owner_id', 'owner', 'set null'],
  ['patient', 'species_id', 'species', 'set null'],
  ['patient', 'status_id', 'patient_status', 'set null'],
  ['payment', 'billing_account_id', 'billing_account', 'no action'],
  ['payment', 'patient_id', 'patient', 'no action'],
  ['payment', 'refund_of_id', 'payment', 'set null'],
  ['treatment', 'appointment_id', 'appointment', 'set null'],
  ['treatment', 'menu_item_id', 'treatment_menu_item', 'set null'],
  ['treatment', 'patient_id', 'patient', 'no action'],
  ['treatment', 'provider_id', 'provider', 'set null'],
  ['treatment_menu_item', 'category_id', 'treatment_category', 'set null'],
  ['vaccine', 'next_vaccine_id', 'vaccine', 'set null'],
  ['vaccine', 'species_id', 'species', 'set null'],
  ['webhook_delivery', 'event_id', 'event', 'cascade'],
  ['webhook_delivery', 'subscription_id', 'webhook_subscription', 'no action'],
  ['working_hours', 'branch_id', 'branch', 'no action'],
  ['working_hours', 'provider_id', 'provider', 'no action'],
];

const fkName = (table: string, column: string) => `${table}_${column}_foreign`;

const onDelete = (rule: 'no action' | 'set null' | 'cascade', column: string | null) =>
  rule === 'no action'
    ? ''
    : rule === 'cascade'
      ? ' on delete cascade'
      : ` on delete set null${column ? ` ("${column}")` : ''}`;

const APPOINTMENT_OVERLAP = `tstzrange("start_at", "end_at") with &&) where ("cancelled_at" is null)`;
const HOURS_OVERLAP = `"weekday" with =, int4range("start_minute", "end_minute") with &&)`;

export class Migration20261205000000ShardReady extends Migration {
  override up(): void {
    // The foreign keys go first: each depends on the primary key it references.
    for (const [table, column] of FOREIGN_KEYS)
      this.addSql(`alter table "${table}" drop constraint "${fkName(table, column)}"`);
    for (const table of TABLES)
      this.addSql(
        `alter table "${table}" drop constraint "${table}_pkey", add constraint "${table}_pkey" primary key ("id", "clinic_id")`,
      );
    for (const [table, column, target, rule] of FOREIGN_KEYS)
      this.addSql(
        `alter table "${table}" add constraint "${fkName(table, column)}" foreign key ("clinic_id", "${column}") references "${target}" ("clinic_id", "id")${onDelete(rule, column)}`,
      );
    this.addSql(
      `alter table "appointment" drop constraint "appointment_no_overlap", add constraint "appointment_no_overlap" exclude using gist ("clinic_id" with =, "provider_id" with =, ${APPOINTMENT_OVERLAP}`,
    );
    this.addSql(
      `alter table "working_hours" drop constraint "working_hours_no_overlap", add constraint "working_hours_no_overlap" exclude using gist ("clinic_id" with =, "provider_id" with =, ${HOURS_OVERLAP}`,
    );
    this.addSql('drop index "idempotency_key_api_key_id_key_hash_unique"');
    this.addSql(
      'create unique index "idempotency_key_clinic_id_api_key_id_key_hash_unique" on "idempotency_key" ("clinic_id", "api_key_id", "key_hash")',
    );
  }

  override down(): void {
    this.addSql('drop index "idempotency_key_clinic_id_api_key_id_key_hash_unique"');
    this.addSql(
      'create unique index "idempotency_key_api_key_id_key_hash_unique" on "idempotency_key" ("api_key_id", "key_hash")',
    );
    this.addSql(
      `alter table "working_hours" drop constraint "working_hours_no_overlap", add constraint "working_hours_no_overlap" exclude using gist ("provider_id" with =, ${HOURS_OVERLAP}`,
    );
    this.addSql(
      `alter table "appointment" drop constraint "appointment_no_overlap", add constraint "appointment_no_overlap" exclude using gist ("provider_id" with =, ${APPOINTMENT_OVERLAP}`,
    );
    for (const [table, column] of FOREIGN_KEYS)
      this.addSql(`alter table "${table}" drop constraint "${fkName(table, column)}"`);
    for (const table of TABLES)
      this.addSql(
        `alter table "${table}" drop constraint "${table}_pkey", add constraint "${table}_pkey" primary key ("id")`,
      );
    for (const [table, column, target, rule] of FOREIGN_KEYS)
      this.addSql(
        `alter table "${table}" add constraint "${fkName(table, column)}" foreign key ("${column}") references "${target}" ("id")${onDelete(rule, null)}`,
      );
  }
}
