/**
 * The statements the app runs for the benchmarked chat pages, exactly as MikroORM builds them
 * (`?` placeholders), pinned by test/bench-sql.test.ts. bench/raw-server.ts no longer reads them:
 * it runs what bench/patients.ts captures from the app on every run (bench/capture-app-sql.ts),
 * so this pin only documents the statements and flags a change of them in the tests.
 */
const MESSAGE_COLUMNS =
  'select "e"."id", "e"."conversation_id", "e"."created_at", "e"."direction", "e"."failure_reason", "e"."from_phone", "e"."media_type", "e"."media_path", "e"."patient_phone", "e"."reaction_patient", "e"."reaction_clinic", "e"."replied_to_id", "e"."sent_at", "e"."delivered_at", "e"."read_at", "e"."failed_at", "e"."template_name", "e"."text", "e"."to_phone", "e"."type", "e"."updated_at"';

export const chatSql = {
  /** GET /v1/chat/messages?limit=N: params clinic, limit + 1. */
  messages: `${MESSAGE_COLUMNS} from "message" as "e" where "e"."clinic_id" = ? order by "e"."created_at" desc, "e"."id" desc limit ?`,
  /** GET /v1/chat/messages?updated_since=T&limit=N (first page): params T, clinic, T, clinic, limit + 1. */
  messagesSync: `${MESSAGE_COLUMNS}, "e"."seq" from "message" as "e" where "e"."updated_at" >= ? and (e.seq >= coalesce((select s.seq from "message" s where s.clinic_id = ? and s.updated_at >= ? order by s.updated_at, s.seq limit 1), 0)) and "e"."clinic_id" = ? order by "e"."seq" asc, "e"."id" asc limit ?`,
  /** GET /v1/chat/conversations?limit=N: params clinic, limit + 1. */
  conversations:
    'select "e"."id", "e"."clinic_phone", "e"."created_at", "e"."display_name", "e"."last_inbound_at", "e"."is_handled", "e"."last_activity_at", "e"."last_message_preview", "e"."last_outbound_at", "e"."patient_phone", "e"."updated_at" from "conversation" as "e" where "e"."clinic_id" = ? order by "e"."last_activity_at" desc nulls last, "e"."id" desc limit ?',
  /** The patients of a page's phones: params a text[] literal, clinic. */
  patientsByPhone:
    'select "e"."id", "e"."first_name", "e"."last_name", "e"."phone" from "patient" as "e" where (e.phone = any(?::text[])) and "e"."clinic_id" = ? order by "e"."id" asc',
};
