import type { EntityManager } from '@mikro-orm/postgresql';
import { runNamed, statementOf } from '../db/named-statements.ts';
import { completeClaimed, type JobClaim } from '../lib/job-queue.ts';
import { DELIVERY_QUEUE } from '../services/webhooks/delivery-jobs.ts';

/**
 * Successful attempts, written together (issue 17, the delivery bench): the common case of the
 * delivery worker, one statement for every success that ended while the previous statement was
 * under way. Each success is its attempt's row, the end of its subscription's failure streak
 * (when it had one) and its job's completion, so an attempt is recorded exactly when its job is
 * settled: a worker dying between two separate statements would run the attempt again and log it
 * twice. pg-boss's own completion after the handler then finds the job settled and changes
 * nothing (delivery jobs have no dependencies for it to release).
 *
 * The completion is fenced on the attempt each job was fetched at (`retry_count`, as pg-boss
 * 12.38's own `complete` with `{ id, retryCount }` fences it: plans.attemptFence): a success whose
 * worker's claim lapsed while another worker took the job settles nothing and writes no row (it
 * answers null), so the attempt is logged once, by the worker that holds the job.
 *
 * At low rates a success is written at once (nothing under way); under load, the successes of
 * many attempts share one statement and one commit instead of one each.
 */
export interface Success {
  clinicId: number;
  subscription: number;
  event: number;
  trigger: string;
  attempt: number;
  attemptedAt: Date;
  status: number | null;
  excerpt: string | null;
  durationMs: number;
  now: Date;
  /** The queue job the attempt ran as; absent when called outside the worker (tests). */
  job?: JobClaim;
}

/** At most this many statements under way at once; the rest wait and go together. */
const WRITERS = 2;

const insertSql = statementOf(
  `with "u" as (
     select * from unnest(?::int[], ?::int[], ?::int[], ?::text[], ?::int[], ?::timestamptz[], ?::int[], ?::text[], ?::int[], ?::timestamptz[], ?::uuid[], ?::int[])
       with ordinality as "u"("clinic", "subscription", "event", "trigger", "attempt", "attempted_at", "status", "excerpt", "duration", "now", "job", "retry_count", "n")),
   "j" as (${completeClaimed('?', '"u"')}),
   "ok" as (select * from "u" where "u"."job" is null or "u"."job" in (select "id" from "j")),
   "d" as (
     insert into "webhook_delivery" ("clinic_id", "subscription_id", "event_id", "trigger", "status", "attempt", "attempted_at", "next_attempt_at", "response_status", "response_excerpt", "error", "duration_ms", "created_at", "updated_at")
     select "clinic", "subscription", "event", "trigger", 'succeeded', "attempt", "attempted_at", null, "status", "excerpt", null, "duration", "now", "now"
     from "ok" order by "n"
     returning "id"),
   "s" as (update "webhook_subscription" set "failing_since" = null, "consecutive_failures" = 0 where "id" in (select "subscription" from "ok") and "failing_since" is not null)
   select (select coalesce(array_agg("n" order by "n"), '{}') from "ok") as "written",
     (select coalesce(array_agg("id" order by "id"), '{}') from "d") as "ids"`,
);

interface Pending {
  success: Success;
  resolve: (id: number | null) => void;
  reject: (err: unknown) => void;
}

/** One writer per database (the worker's EntityManager). */
const writers = new WeakMap<object, SuccessWriter>();

/** Records `success`; answers its delivery row's id once committed, null when its claim had lapsed. */
export function recordSuccess(em: EntityManager, success: Success): Promise<number | null> {
  let writer = writers.get(em.config);
  if (!writer) {
    writer = new SuccessWriter(em);
    writers.set(em.config, writer);
  }
  return writer.add(success);
}

class SuccessWriter {
  #pending: Pending[] = [];
  #running = 0;
  readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  add(success: Success): Promise<number | null> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ success, resolve, reject });
      if (this.#running < WRITERS) void this.#write();
    });
  }

  async #write(): Promise<void> {
    const batch = this.#pending.splice(0);
    if (!batch.length) return;
    this.#running++;
    try {
      await this.#insert(batch);
    } catch (err) {
      // One bad row (its event deleted by retention meanwhile) must not fail its batch-mates,
      // whose jobs would run again: each alone, then only the bad one fails.
      if (batch.length === 1) batch[0].reject(err);
      else for (const p of batch) await this.#insert([p]).catch(p.reject);
    } finally {
      this.#running--;
      if (this.#pending.length) void this.#write();
    }
  }

  /** One statement for `batch`; resolves each with its row's id (null: claim lapsed), or throws. */
  async #insert(batch: Pending[]): Promise<void> {
    const s = batch.map((p) => p.success);
    const iso = (d: Date) => d.toISOString();
    const res = await runNamed(this.em, insertSql, [
      s.map((x) => x.clinicId),
      s.map((x) => x.subscription),
      s.map((x) => x.event),
      s.map((x) => x.trigger),
      s.map((x) => x.attempt),
      s.map((x) => iso(x.attemptedAt)),
      s.map((x) => x.status),
      s.map((x) => x.excerpt),
      s.map((x) => x.durationMs),
      s.map((x) => iso(x.now)),
      s.map((x) => x.job?.id ?? null),
      s.map((x) => x.job?.retryCount ?? null),
      DELIVERY_QUEUE,
    ]);
    const row = res.rows[0] as unknown[] | Record<string, unknown>;
    const [written, ids] = (Array.isArray(row) ? row : [row.written, row.ids]) as unknown[][];
    // Ids are given in insertion order: the written rows' order is the batch's (`n` from 1).
    const idOf = new Map(written.map((n, i) => [Number(n), Number(ids[i])]));
    for (const [i, p] of batch.entries()) p.resolve(idOf.get(i + 1) ?? null);
  }
}
