import { Migration } from '@mikro-orm/migrations';

/** The whole domain of the spec: clinics, keys, patients, catalog, clinical records, chat, webhooks, events. */
export class Migration20261122000000Initial extends Migration {
  override up(): void {
    this.addSql(
      'create table "clinic" ("id" serial primary key, "name" varchar(255) not null, "kind" text not null, "country" varchar(2) not null, "timezone" varchar(255) not null default \'UTC\', "phone" varchar(255) null, "handled_marking_enabled" boolean not null default false, "ai_transcription_enabled" boolean not null default false, "created_at" timestamptz not null, "updated_at" timestamptz not null)',
    );
    this.addSql(
      'alter table "clinic" add constraint "clinic_kind_check" check ("kind" in (\'dental\', \'veterinary\'))',
    );
    this.addSql(
      'create table "branch" ("id" serial primary key, "clinic_id" int not null, "name" varchar(255) not null, "phone" varchar(255) null, "address" jsonb null, "color" varchar(255) null)',
    );
    this.addSql('create index "branch_clinic_id_index" on "branch" ("clinic_id")');
    this.addSql(
      'create table "billing_account" ("id" serial primary key, "clinic_id" int not null, "business_name" varchar(255) not null, "business_id" varchar(255) null)',
    );
    this.addSql('create index "billing_account_clinic_id_index" on "billing_account" ("clinic_id")');
    this.addSql(
      'create table "appointment_type" ("id" serial primary key, "clinic_id" int not null, "name" varchar(255) not null, "duration_minutes" int not null, "color" varchar(255) null)',
    );
    this.addSql('create index "appointment_type_clinic_id_index" on "appointment_type" ("clinic_id")');
    this.addSql(
      'create table "appointment_status" ("id" serial primary key, "clinic_id" int not null, "name" varchar(255) not null, "color" varchar(255) not null, "enabled" boolean not null default true)',
    );
    this.addSql('create index "appointment_status_clinic_id_index" on "appointment_status" ("clinic_id")');
    this.addSql(
      'create table "api_key" ("id" serial primary key, "clinic_id" int not null, "name" varchar(255) not null, "prefix" varchar(255) not null, "hash" varchar(255) not null, "scopes" text[] not null, "created_at" timestamptz not null, "last_used_at" timestamptz null, "revoked_at" timestamptz null)',
    );
    this.addSql('create index "api_key_clinic_id_index" on "api_key" ("clinic_id")');
    this.addSql('alter table "api_key" add constraint "api_key_hash_unique" unique ("hash")');
    this.addSql(
      'create table "conversation" ("id" serial primary key, "clinic_id" int not null, "patient_phone" varchar(255) not null, "clinic_phone" varchar(255) null, "display_name" varchar(255) null, "last_message_preview" text null, "last_activity_at" timestamptz null, "last_inbound_at" timestamptz null, "last_outbound_at" timestamptz null, "is_handled" boolean not null default false, "created_at" timestamptz not null, "updated_at" timestamptz not null)',
    );
    this.addSql('create index "conversation_clinic_id_index" on "conversation" ("clinic_id")');
    this.addSql(
      'alter table "conversation" add constraint "conversation_clinic_id_patient_phone_unique" unique ("clinic_id", "patient_phone")',
    );
    this.addSql(
      'create table "event" ("id" serial primary key, "clinic_id" int not null, "type" varchar(255) not null, "scope" varchar(255) not null, "data" jsonb not null, "created_at" timestamptz not null)',
    );
    this.addSql('create index "event_clinic_id_index" on "event" ("clinic_id")');
    this.addSql(
      'create index "event_clinic_id_created_at_id_index" on "event" ("clinic_id", "created_at", "id")',
    );
    this.addSql(
      'create table "measurement" ("id" serial primary key, "clinic_id" int not null, "name" varchar(255) not null, "unit" varchar(255) null, "is_required" boolean not null default false)',
    );
    this.addSql('create index "measurement_clinic_id_index" on "measurement" ("clinic_id")');
    this.addSql(
      'create table "message" ("id" serial primary key, "clinic_id" int not null, "conversation_id" int not null, "direction" text not null, "type" text not null, "from_phone" varchar(255) null, "to_phone" varchar(255) null, "text" text null, "media_type" varchar(255) null, "media_mime" varchar(255) null, "media_path" varchar(255) null, "media_filename" varchar(255) null, "template_name" varchar(255) null, "template_params" jsonb null, "replied_to_id" int null, "reaction_patient" varchar(255) null, "reaction_clinic" varchar(255) null, "failure_reason" varchar(255) null, "network_message_id" varchar(255) null, "sent_at" timestamptz null, "delivered_at" timestamptz null, "read_at" timestamptz null, "failed_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null)',
    );
    this.addSql('create index "message_clinic_id_index" on "message" ("clinic_id")');
    this.addSql('create index "message_network_message_id_index" on "message" ("network_message_id")');
    this.addSql(
      'create index "message_conversation_id_created_at_id_index" on "message" ("conversation_id", "created_at", "id")',
    );
    this.addSql(
      'create index "message_clinic_id_updated_at_id_index" on "message" ("clinic_id", "updated_at", "id")',
    );
    this.addSql(
      'alter table "message" add constraint "message_direction_check" check ("direction" in (\'inbound\', \'outbound\'))',
    );
    this.addSql(
      "alter table \"message\" add constraint \"message_type_check\" check (\"type\" in ('text', 'image', 'document', 'audio', 'video', 'sticker', 'contacts'))",
    );
    this.addSql(
      'create table "owner" ("id" serial primary key, "clinic_id" int not null, "first_name" varchar(255) null, "last_name" varchar(255) null, "phone" varchar(255) null, "email" varchar(255) null, "address" jsonb null, "created_at" timestamptz not null, "updated_at" timestamptz not null)',
    );
    this.addSql('create index "owner_clinic_id_index" on "owner" ("clinic_id")');
    this.addSql('create index "owner_clinic_id_phone_index" on "owner" ("clinic_id", "phone")');
    this.addSql(
      'create table "patient_status" ("id" serial primary key, "clinic_id" int not null, "name" varchar(255) not null, "color" varchar(255) null)',
    );
    this.addSql('create index "patient_status_clinic_id_index" on "patient_status" ("clinic_id")');
    this.addSql(
      'create table "provider" ("id" serial primary key, "clinic_id" int not null, "name" varchar(255) not null, "type" varchar(255) not null, "color" varchar(255) null)',
    );
    this.addSql('create index "provider_clinic_id_index" on "provider" ("clinic_id")');
    this.addSql(
      'create table "species" ("id" serial primary key, "clinic_id" int not null, "name" varchar(255) not null)',
    );
    this.addSql('create index "species_clinic_id_index" on "species" ("clinic_id")');
    this.addSql(
      'create table "breed" ("id" serial primary key, "clinic_id" int not null, "name" varchar(255) not null, "species_id" int null)',
    );
    this.addSql('create index "breed_clinic_id_index" on "breed" ("clinic_id")');
    this.addSql(
      'create table "patient" ("id" serial primary key, "clinic_id" int not null, "first_name" varchar(255) null, "last_name" varchar(255) null, "phone" varchar(255) null, "email" varchar(255) null, "email_lower" varchar(255) null, "gender" text null, "birth_date" date null, "status_id" int null, "name_fl" varchar(255) not null default \'\', "name_lf" varchar(255) not null default \'\', "address" jsonb null, "contacts" jsonb null, "balance" numeric(12,2) null, "id_number" varchar(255) null, "owner_id" int null, "species_id" int null, "breed_id" int null, "created_at" timestamptz not null, "updated_at" timestamptz not null)',
    );
    this.addSql('create index "patient_clinic_id_index" on "patient" ("clinic_id")');
    this.addSql('create index "patient_clinic_id_phone_index" on "patient" ("clinic_id", "phone")');
    this.addSql(
      'create index "patient_clinic_id_email_lower_index" on "patient" ("clinic_id", "email_lower")',
    );
    this.addSql('create index "patient_name_fl_idx" on "patient" ("clinic_id", "name_fl" text_pattern_ops)');
    this.addSql('create index "patient_name_lf_idx" on "patient" ("clinic_id", "name_lf" text_pattern_ops)');
    this.addSql(
      'alter table "patient" add constraint "patient_gender_check" check ("gender" in (\'male\', \'female\'))',
    );
    this.addSql(
      'create table "payment" ("id" serial primary key, "clinic_id" int not null, "patient_id" int not null, "billing_account_id" int not null, "amount" numeric(12,2) not null, "currency" varchar(3) not null, "method_type" text not null, "method_details" jsonb null, "is_refund" boolean not null default false, "refund_of_id" int null, "receipt_number" varchar(255) null, "paid_at" timestamptz not null, "note" text null, "cancelled_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null)',
    );
    this.addSql('create index "payment_clinic_id_index" on "payment" ("clinic_id")');
    this.addSql(
      'create index "payment_patient_id_paid_at_id_index" on "payment" ("patient_id", "paid_at", "id")',
    );
    this.addSql(
      "alter table \"payment\" add constraint \"payment_method_type_check\" check (\"method_type\" in ('cash', 'card', 'check', 'bank_transfer', 'other'))",
    );
    this.addSql(
      'create table "call" ("id" serial primary key, "clinic_id" int not null, "patient_id" int null, "direction" text not null, "from_phone" varchar(255) null, "to_phone" varchar(255) null, "started_at" timestamptz not null, "ended_at" timestamptz null, "duration_seconds" int not null default 0, "answered" boolean not null default false, "note" text null, "recorded" boolean not null default false, "recording_available" boolean not null default false, "recording_path" varchar(255) null, "transcript_status" varchar(255) null, "transcript_summary" text null, "transcript_segments" jsonb null, "created_at" timestamptz not null, "updated_at" timestamptz not null)',
    );
    this.addSql('create index "call_clinic_id_index" on "call" ("clinic_id")');
    this.addSql(
      'alter table "call" add constraint "call_direction_check" check ("direction" in (\'inbound\', \'outbound\'))',
    );
    this.addSql(
      'create table "appointment" ("id" serial primary key, "clinic_id" int not null, "patient_id" int not null, "branch_id" int not null, "provider_id" int null, "type_id" int null, "status_id" int null, "start_at" timestamptz not null, "end_at" timestamptz not null, "note" text null, "cancelled_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null)',
    );
    this.addSql('create index "appointment_clinic_id_index" on "appointment" ("clinic_id")');
    this.addSql(
      'create index "appointment_patient_id_start_at_id_index" on "appointment" ("patient_id", "start_at", "id")',
    );
    this.addSql(
      'create table "template" ("id" serial primary key, "clinic_id" int not null, "name" varchar(255) not null, "display_name" varchar(255) null, "language" varchar(255) null, "model_type" varchar(255) null, "category" varchar(255) null, "status" varchar(255) null, "rejection_reason" varchar(255) null, "parameter_count" int null, "body" text null, "header" jsonb null, "footer" jsonb null, "buttons" jsonb null, "has_active_version" boolean not null default true, "created_at" timestamptz not null, "updated_at" timestamptz not null)',
    );
    this.addSql('create index "template_clinic_id_index" on "template" ("clinic_id")');
    this.addSql(
      'alter table "template" add constraint "template_clinic_id_name_unique" unique ("clinic_id", "name")',
    );
    this.addSql(
      'create table "treatment_category" ("id" serial primary key, "clinic_id" int not null, "name" varchar(255) not null)',
    );
    this.addSql('create index "treatment_category_clinic_id_index" on "treatment_category" ("clinic_id")');
    this.addSql(
      'create table "treatment_menu_item" ("id" serial primary key, "clinic_id" int not null, "name" varchar(255) not null, "code" varchar(255) null, "price" numeric(12,2) null, "color" varchar(255) null, "category_id" int null)',
    );
    this.addSql('create index "treatment_menu_item_clinic_id_index" on "treatment_menu_item" ("clinic_id")');
    this.addSql(
      'create table "treatment" ("id" serial primary key, "clinic_id" int not null, "patient_id" int not null, "appointment_id" int null, "menu_item_id" int null, "provider_id" int null, "description" varchar(255) null, "teeth" text[] null, "price" numeric(12,2) null, "status" text not null, "performed_at" timestamptz not null, "note" text null, "cancelled_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null)',
    );
    this.addSql('create index "treatment_clinic_id_index" on "treatment" ("clinic_id")');
    this.addSql(
      'create index "treatment_patient_id_performed_at_id_index" on "treatment" ("patient_id", "performed_at", "id")',
    );
    this.addSql(
      'alter table "treatment" add constraint "treatment_status_check" check ("status" in (\'planned\', \'completed\'))',
    );
    this.addSql(
      'create table "vaccine" ("id" serial primary key, "clinic_id" int not null, "name" varchar(255) not null, "code" varchar(255) null, "species_id" int null, "interval_months" int null, "next_vaccine_id" int null, "price" numeric(12,2) null, "batch_required" boolean not null default false)',
    );
    this.addSql('create index "vaccine_clinic_id_index" on "vaccine" ("clinic_id")');
    this.addSql(
      'create table "webhook_subscription" ("id" serial primary key, "clinic_id" int not null, "url" varchar(255) not null, "event_types" text[] not null, "enabled" boolean not null default true, "secret" varchar(255) not null, "consecutive_failures" int not null default 0, "disabled_at" timestamptz null, "disabled_reason" varchar(255) null, "deleted_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null)',
    );
    this.addSql(
      'create index "webhook_subscription_clinic_id_index" on "webhook_subscription" ("clinic_id")',
    );
    this.addSql(
      'create table "webhook_delivery" ("id" serial primary key, "clinic_id" int not null, "subscription_id" int not null, "event_id" int not null, "status" varchar(255) not null, "attempts" int not null default 0, "last_attempt_at" timestamptz null, "next_attempt_at" timestamptz null, "response_status" int null, "response_body" text null, "error" text null, "duration_ms" int null, "created_at" timestamptz not null, "updated_at" timestamptz not null)',
    );
    this.addSql('create index "webhook_delivery_clinic_id_index" on "webhook_delivery" ("clinic_id")');
    this.addSql(
      'create index "webhook_delivery_subscription_id_created_at_id_index" on "webhook_delivery" ("subscription_id", "created_at", "id")',
    );
    this.addSql(
      'alter table "branch" add constraint "branch_clinic_id_foreign" foreign key ("clinic_id") references "clinic" ("id")',
    );
    this.addSql(
      'alter table "billing_account" add constraint "billing_account_clinic_id_foreign" foreign key ("clinic_id") references "clinic" ("id")',
    );
    this.addSql(
      'alter table "appointment_type" add constraint "appointment_type_clinic_id_foreign" foreign key ("clinic_id") references "clinic" ("id")',
    );
    this.addSql(
      'alter table "appointment_status" add constraint "appointment_status_clinic_id_foreign" foreign key ("clinic_id") references "clinic" ("id")',
    );
    this.addSql(
      'alter table "api_key" add constraint "api_key_clinic_id_foreign" foreign key ("clinic_id") references "clinic" ("id")',
    );
    this.addSql(
      'alter table "conversation" add constraint "conversation_clinic_id_foreign" foreign key ("clinic_id") references "clinic" ("id")',
    );
    this.addSql(
      'alter table "event" add constraint "event_clinic_id_foreign" foreign key ("clinic_id") references "clinic" ("id")',
    );
    this.addSql(
      'alter table "measurement" add constraint "measurement_clinic_id_foreign" foreign key ("clinic_id") references "clinic" ("id")',
    );
    this.addSql(
      'alter table "message" add constraint "message_clinic_id_foreign" foreign key ("clinic_id") references "clinic" ("id")',
    );
    this.addSql(
      'alter table "message" add constraint "message_conversation_id_foreign" foreign key ("conversation_id") references "conversation" ("id")',
    );
    this.addSql(
      'alter table "message" add constraint "message_replied_to_id_foreign" foreign key ("replied_to_id") references "message" ("id") on delete set null',
    );
    this.addSql(
      'alter table "owner" add constraint "owner_clinic_id_foreign" foreign key ("clinic_id") references "clinic" ("id")',
    );
    this.addSql(
      'alter table "patient_status" add constraint "patient_status_clinic_id_foreign" foreign key ("clinic_id") references "clinic" ("id")',
    );
    this.addSql(
      'alter table "provider" add constraint "provider_clinic_id_foreign" foreign key ("clinic_id") references "clinic" ("id")',
    );
    this.addSql(
      'alter table "species" add constraint "species_clinic_id_foreign" foreign key ("clinic_id") references "clinic" ("id")',
    );
    this.addSql(
      'alter table "breed" add constraint "breed_clinic_id_foreign" foreign key ("clinic_id") references "clinic" ("id")',
    );
    this.addSql(
      'alter table "breed" add constraint "breed_species_id_foreign" foreign key ("species_id") references "species" ("id") on delete set null',
    );
    this.addSql(
      'alter table "patient" add constraint "patient_clinic_id_foreign" foreign key ("clinic_id") references "clinic" ("id")',
    );
    this.addSql(
      'alter table "patient" add constraint "patient_status_id_foreign" foreign key ("status_id") references "patient_status" ("id") on delete set null',
    );
    this.addSql(
      'alter table "patient" add constraint "patient_owner_id_foreign" foreign key ("owner_id") references "owner" ("id") on delete set null',
    );
    this.addSql(
      'alter table "patient" add constraint "patient_species_id_foreign" foreign key ("species_id") references "species" ("id") on delete set null',
    );
    this.addSql(
      'alter table "patient" add constraint "patient_breed_id_foreign" foreign key ("breed_id") references "breed" ("id") on delete set null',
    );
    this.addSql(
      'alter table "payment" add constraint "payment_clinic_id_foreign" foreign key ("clinic_id") references "clinic" ("id")',
    );
    this.addSql(
      'alter table "payment" add constraint "payment_patient_id_foreign" foreign key ("patient_id") references "patient" ("id")',
    );
    this.addSql(
      'alter table "payment" add constraint "payment_billing_account_id_foreign" foreign key ("billing_account_id") references "billing_account" ("id")',
    );
    this.addSql(
      'alter table "payment" add constraint "payment_refund_of_id_foreign" foreign key ("refund_of_id") references "payment" ("id") on delete set null',
    );
    this.addSql(
      'alter table "call" add constraint "call_clinic_id_foreign" foreign key ("clinic_id") references "clinic" ("id")',
    );
    this.addSql(
      'alter table "call" add constraint "call_patient_id_foreign" foreign key ("patient_id") references "patient" ("id") on delete set null',
    );
    this.addSql(
      'alter table "appointment" add constraint "appointment_clinic_id_foreign" foreign key ("clinic_id") references "clinic" ("id")',
    );
    this.addSql(
      'alter table "appointment" add constraint "appointment_patient_id_foreign" foreign key ("patient_id") references "patient" ("id")',
    );
    this.addSql(
      'alter table "appointment" add constraint "appointment_branch_id_foreign" foreign key ("branch_id") references "branch" ("id")',
    );
    this.addSql(
      'alter table "appointment" add constraint "appointment_provider_id_foreign" foreign key ("provider_id") references "provider" ("id") on delete set null',
    );
    this.addSql(
      'alter table "appointment" add constraint "appointment_type_id_foreign" foreign key ("type_id") references "appointment_type" ("id") on delete set null',
    );
    this.addSql(
      'alter table "appointment" add constraint "appointment_status_id_foreign" foreign key ("status_id") references "appointment_status" ("id") on delete set null',
    );
    this.addSql(
      'alter table "template" add constraint "template_clinic_id_foreign" foreign key ("clinic_id") references "clinic" ("id")',
    );
    this.addSql(
      'alter table "treatment_category" add constraint "treatment_category_clinic_id_foreign" foreign key ("clinic_id") references "clinic" ("id")',
    );
    this.addSql(
      'alter table "treatment_menu_item" add constraint "treatment_menu_item_clinic_id_foreign" foreign key ("clinic_id") references "clinic" ("id")',
    );
    this.addSql(
      'alter table "treatment_menu_item" add constraint "treatment_menu_item_category_id_foreign" foreign key ("category_id") references "treatment_category" ("id") on delete set null',
    );
    this.addSql(
      'alter table "treatment" add constraint "treatment_clinic_id_foreign" foreign key ("clinic_id") references "clinic" ("id")',
    );
    this.addSql(
      'alter table "treatment" add constraint "treatment_patient_id_foreign" foreign key ("patient_id") references "patient" ("id")',
    );
    this.addSql(
      'alter table "treatment" add constraint "treatment_appointment_id_foreign" foreign key ("appointment_id") references "appointment" ("id") on delete set null',
    );
    this.addSql(
      'alter table "treatment" add constraint "treatment_menu_item_id_foreign" foreign key ("menu_item_id") references "treatment_menu_item" ("id") on delete set null',
    );
    this.addSql(
      'alter table "treatment" add constraint "treatment_provider_id_foreign" foreign key ("provider_id") references "provider" ("id") on delete set null',
    );
    this.addSql(
      'alter table "vaccine" add constraint "vaccine_clinic_id_foreign" foreign key ("clinic_id") references "clinic" ("id")',
    );
    this.addSql(
      'alter table "vaccine" add constraint "vaccine_species_id_foreign" foreign key ("species_id") references "species" ("id") on delete set null',
    );
    this.addSql(
      'alter table "vaccine" add constraint "vaccine_next_vaccine_id_foreign" foreign key ("next_vaccine_id") references "vaccine" ("id") on delete set null',
    );
    this.addSql(
      'alter table "webhook_subscription" add constraint "webhook_subscription_clinic_id_foreign" foreign key ("clinic_id") references "clinic" ("id")',
    );
    this.addSql(
      'alter table "webhook_delivery" add constraint "webhook_delivery_clinic_id_foreign" foreign key ("clinic_id") references "clinic" ("id")',
    );
    this.addSql(
      'alter table "webhook_delivery" add constraint "webhook_delivery_subscription_id_foreign" foreign key ("subscription_id") references "webhook_subscription" ("id")',
    );
    this.addSql(
      'alter table "webhook_delivery" add constraint "webhook_delivery_event_id_foreign" foreign key ("event_id") references "event" ("id")',
    );
  }
}
