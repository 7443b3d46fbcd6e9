/**
 * Ready to shard by clinic (issue 35, docs/scale.md): every table of the `public` schema belongs
 * to one clinic — it has a `clinic_id`, and would be distributed by it (Citus), co-located with
 * every other clinic table — unless it is declared here, with why. test/shard-ready.test.ts reads
 * the migrated schema and holds it to that: a new table is a clinic table, or it is added here.
 *
 * - `reference`: small, read on every node, written rarely; joined from clinic tables (Citus
 *   replicates a reference table to every node, so those joins stay local to a shard). Clinic
 *   tables may point at it by a foreign key; it may point only at other reference tables.
 * - `local`: stays on the coordinator as a plain PostgreSQL table, never joined with clinic
 *   tables: bookkeeping of the deployment rather than of a clinic, or written on every request
 *   (a reference table's every write goes to every node).
 *
 * Out of scope: pg-boss's own schema (`pgboss`, src/lib/job-queue.ts). Its tables are the
 * library's (we do not choose their keys), its rows are the cluster's work in flight rather than
 * a clinic's records, and a job names what it acts on in its data (a chat send its clinic, a
 * delivery its subscription and event): it stays on the coordinator (docs/scale.md).
 */
export const globalTables = {
  clinic: {
    kind: 'reference',
    why: "the tenant itself: `clinic_id` is its `id`. Read by every clinic table's join (timezone, mode, country) and looked up by phone by the network callback before any clinic is known",
  },
  api_key: {
    kind: 'reference',
    why: 'looked up by the hash of the presented key before the clinic is known (src/auth/keys.ts), so the hash is unique across all clinics; a handful of rows per clinic, written only when a key is created or revoked',
  },
  rate_limit: {
    kind: 'local',
    why: "rate-limiter-flexible's counters (src/auth/rate-limit.ts), keyed by API key or by client address (failed authentications come from no clinic); written on every request, read by nothing else",
  },
  mikro_orm_migrations: {
    kind: 'local',
    why: 'which migrations ran: one list for the whole database',
  },
} as const satisfies Record<string, { kind: 'reference' | 'local'; why: string }>;

export type GlobalTable = keyof typeof globalTables;
