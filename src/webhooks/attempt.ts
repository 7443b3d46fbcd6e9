import type { EntityManager } from '@mikro-orm/postgresql';
import { runNamed, statementOf } from '../db/named-statements.ts';
import { WebhookDelivery, WebhookSubscription } from '../entities/index.ts';
import type { ClinicMode } from '../lib/clinic-mode.ts';
import type { Clock } from '../lib/clock.ts';
import type { Resolver } from '../lib/guarded-lookup.ts';
import { completeInTransaction, type JobClaim } from '../lib/job-queue.ts';
import { scopeLog } from '../lib/job-scope.ts';
import { deliveryAttempts } from '../lib/metrics.ts';
import { type EventRow, serializeEnvelope } from '../services/events/envelope.ts';
import { clinicWrite } from '../services/unit-of-work.ts';
import { responseExcerpt } from '../services/webhooks/delivery.resource.ts';
import { DELIVERY_QUEUE, type DeliveryJob, enqueueDeliveries } from '../services/webhooks/delivery-jobs.ts';
import {
  disabledReason,
  retryDelaySeconds,
  shouldDisable,
  streakBrokenBefore,
} from '../services/webhooks/retry-schedule.ts';
import { signingSecrets } from '../services/webhooks/secret-rotation.ts';
import { type SendResult, sendDelivery } from './send.ts';
import { deliveryHeaders } from './signing.ts';
import { recordSuccess } from './success-log.ts';

/**
 * One delivery attempt (issue 17, Delivery), what a job of the delivery queue runs: in a system
 * context (no request, no key: the injected clock, the tenant filter off, rows read by id).
 * 1. The subscription and the event are read; nothing is sent when the subscription is deleted,
 *    disabled or no longer subscribes to the type (DELETE stops every queued attempt here), or the
 *    event is gone (retention).
 * 2. The envelope's exact bytes (from the outbox row, never rebuilt) are POSTed, signed.
 * 3. With the job's completion: a success in one statement shared with the successes ending with
 *    it (src/webhooks/success-log.ts); a failure in one transaction with the subscription's failure
 *    streak (and the automatic disable) and, after a scheduled attempt, the next attempt as a new
 *    job whose `next_attempt_at` is on the injected clock.
 * The completion is fenced on the attempt the job was fetched at: a worker whose claim lapsed
 * (heartbeat missed) while another worker took the job records nothing and queues nothing, so one
 * attempt is logged once and one retry chain goes on (its POST may have reached the receiver twice:
 * deliveries are at least once, the receiver dedupes on webhook-id).
 */
export interface AttemptDeps {
  /** The ORM's root EntityManager (each attempt forks it). */
  em: EntityManager;
  clock: Clock;
  timeoutMs: number;
  /** Tests: the DNS answers the guard checks at connect time. */
  resolve?: Resolver;
  /** Tests: the jitter's random number in [0, 1). */
  random?: () => number;
}

export type AttemptOutcome =
  | { outcome: 'skipped'; reason: string; lapsed?: true }
  | {
      outcome: 'succeeded' | 'failed';
      delivery: number;
      result: SendResult;
      nextAttemptAt: Date | null;
      disabled: boolean;
    };

/** The queue job an attempt runs as (completed with the attempt's record), as the worker fetched it. */
export type { JobClaim };

/**
 * `read`: the job's rows when the worker read its batch's at once (readAttempts). Every attempt
 * is counted by outcome (src/lib/metrics.ts) and writes a log line, in the scope of the request
 * that queued it (src/lib/job-scope.ts).
 */
export async function attemptDelivery(
  deps: AttemptDeps,
  job: DeliveryJob,
  claim?: JobClaim,
  read?: AttemptRead,
): Promise<AttemptOutcome> {
  const ids = {
    subscription: job.subscription,
    event: job.event,
    attempt: job.attempt,
    trigger: job.trigger,
  };
  let done: AttemptOutcome;
  try {
    done = await attemptOnce(deps, job, claim, read);
  } catch (err) {
    deliveryAttempts.inc({ outcome: 'error' });
    throw err;
  }
  const outcome = done.outcome === 'skipped' && done.lapsed ? 'lapsed' : done.outcome;
  deliveryAttempts.inc({ outcome });
  scopeLog().info(
    done.outcome === 'skipped'
      ? { ...ids, outcome, reason: done.reason }
      : {
          ...ids,
          outcome,
          status: done.result.status,
          duration_ms: done.result.durationMs,
          ...(done.result.error ? { error: done.result.error } : {}),
          ...(done.disabled ? { disabled: true } : {}),
        },
    'webhook delivery attempt',
  );
  return done;
}

async function attemptOnce(
  deps: AttemptDeps,
  job: DeliveryJob,
  claim: JobClaim | undefined,
  read: AttemptRead | undefined,
): Promise<AttemptOutcome> {
  read ??= (await readAttempts(deps.em, [job]))[0];
  const skip = whyNot(read);
  if (skip) return { outcome: 'skipped', reason: skip };
  const { sub, event } = read as { sub: Subscription; event: EventRow };
  const attemptedAt = deps.clock.now();
  const body = serializeEnvelope(event);
  const result = await sendDelivery(
    sub.url,
    body,
    deliveryHeaders(signingSecrets(sub, attemptedAt), event, body, attemptedAt),
    {
      timeoutMs: deps.timeoutMs,
      // The receiver is held to its clinic's URL policy at every attempt (docs/test-mode.md).
      mode: sub.clinicMode,
      ...(deps.resolve ? { resolve: deps.resolve } : {}),
    },
  );
  return result.ok
    ? recordSucceeded(deps, job, claim, sub, attemptedAt, result)
    : record(deps, job, claim, sub, attemptedAt, result);
}

/** What an attempt reads of its subscription. */
interface Subscription {
  id: number;
  clinicId: number;
  clinicMode: ClinicMode;
  url: string;
  eventTypes: string[];
  enabled: boolean;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
  deletedAt: Date | null;
}

/** An attempt's subscription and event as read; either is null when gone. */
export interface AttemptRead {
  sub: Subscription | null;
  event: EventRow | null;
}

/**
 * The subscriptions and events of a batch of jobs in one statement (one round trip, a named
 * statement planned once per connection), read by id in a system context (no tenant filter).
 */
const readSql = statementOf(
  `select "s"."id", "s"."clinic_id", "s"."url", "s"."event_types", "s"."enabled", "s"."secret", "s"."deleted_at",
     "s"."previous_secret", "s"."previous_secret_expires_at", "c"."mode",
     "e"."id" as "event_id", "e"."type", "e"."created_at", "e"."data", "e"."test"
   from unnest(?::int[], ?::int[]) with ordinality as "j"("subscription", "event", "n")
   left join "webhook_subscription" as "s" on "s"."id" = "j"."subscription"
   left join "clinic" as "c" on "c"."id" = "s"."clinic_id"
   left join "event" as "e" on "e"."id" = "j"."event"
   order by "j"."n"`,
);

export async function readAttempts(em: EntityManager, jobs: readonly DeliveryJob[]): Promise<AttemptRead[]> {
  const res = await runNamed(em, readSql, [jobs.map((j) => j.subscription), jobs.map((j) => j.event)]);
  return res.rows.map((r) => {
    const row = (
      res.columns ? Object.fromEntries(res.columns.map((c, i) => [c, (r as unknown[])[i]])) : r
    ) as Record<string, any>;
    return {
      sub:
        row.id == null
          ? null
          : {
              id: row.id,
              clinicId: row.clinic_id,
              clinicMode: row.mode,
              url: row.url,
              eventTypes: row.event_types,
              enabled: row.enabled,
              secret: row.secret,
              previousSecret: row.previous_secret,
              previousSecretExpiresAt:
                row.previous_secret_expires_at == null ? null : new Date(row.previous_secret_expires_at),
              deletedAt: row.deleted_at,
            },
      event:
        row.event_id == null
          ? null
          : // The pool answers timestamps as text (src/db/lean.ts reads them so); the envelope wants a Date.
            ({
              id: row.event_id,
              type: row.type,
              createdAt: new Date(row.created_at),
              data: row.data,
              test: row.test === true,
            } as EventRow),
    };
  });
}

function whyNot({ sub, event }: AttemptRead): string | null {
  if (!sub || sub.deletedAt) return 'subscription deleted';
  if (!sub.enabled) return 'subscription disabled';
  if (!event) return 'event deleted';
  if (sub.eventTypes.length && !sub.eventTypes.includes(event.type)) return 'type no longer subscribed';
  return null;
}

/** The job was no longer this worker's when its attempt ended: its record is rolled back. */
class LapsedClaim extends Error {}

const lapsed: AttemptOutcome = {
  outcome: 'skipped',
  reason: 'claim lapsed: another worker holds the job',
  lapsed: true,
};

async function recordSucceeded(
  deps: AttemptDeps,
  job: DeliveryJob,
  claim: JobClaim | undefined,
  sub: Subscription,
  attemptedAt: Date,
  result: SendResult,
): Promise<AttemptOutcome> {
  const delivery = await recordSuccess(deps.em, {
    clinicId: sub.clinicId,
    subscription: sub.id,
    event: job.event,
    trigger: job.trigger,
    attempt: job.attempt,
    attemptedAt,
    status: result.status,
    excerpt: result.body == null ? null : responseExcerpt(result.body),
    durationMs: result.durationMs,
    now: deps.clock.now(),
    ...(claim ? { job: claim } : {}),
  });
  if (delivery == null) return lapsed;
  return { outcome: 'succeeded', delivery, result, nextAttemptAt: null, disabled: false };
}

/** Whether a failure begins a new streak (one parameter: `streakBrokenBefore` of its time). */
const RESTARTS =
  '("failing_since" is null or "last_failure_at" is null or "last_failure_at" < ?::timestamptz)';

/** A failure: the streak, the automatic disable and the next attempt's job, in one transaction. */
async function record(
  deps: AttemptDeps,
  job: DeliveryJob,
  claim: JobClaim | undefined,
  sub: Subscription,
  attemptedAt: Date,
  result: SendResult,
): Promise<AttemptOutcome> {
  // The time the attempt ended is the one the streak and the schedule count from.
  const now = deps.clock.now();
  // The one unit of work of writes, bound to the subscription's clinic: the automatic disable
  // is a change of the subscription like a PATCH's (its updated_at, its ETag, from the write's time).
  const recorded = clinicWrite(deps.em.fork(), sub.clinicId, now, async (w): Promise<AttemptOutcome> => {
    const tx = w.em;
    const exec = (sql: string, params: unknown[]) =>
      tx.getConnection().execute(sql, params, 'all', tx.getTransactionContext()) as Promise<any[]>;
    let disabled = false;
    let nextAttemptAt: Date | null = null;
    // First, in the transaction that records the failure (and queues its retry), as
    // src/webhooks/success-log.ts does for a success: an attempt is recorded exactly when its job is
    // settled, so a worker dying in between never schedules a retry twice.
    if (claim && (await completeInTransaction(tx, DELIVERY_QUEUE, [claim])) === 0) throw new LapsedClaim();
    // One statement: attempts of one subscription may end at the same time (group concurrency).
    // The streak starts again at this failure when there is none, or when the previous failure
    // is older than the quiet gap (retry-schedule.ts): "failing for 72 hours", not "no success".
    // It locks the subscription's row for the rest of the transaction.
    const quietSince = streakBrokenBefore(now);
    const [row] = await exec(
      `update "webhook_subscription" set
         "consecutive_failures" = case when ${RESTARTS} then 1 else "consecutive_failures" + 1 end,
         "failing_since" = case when ${RESTARTS} then ?::timestamptz else "failing_since" end,
         "last_failure_at" = greatest("last_failure_at", ?::timestamptz)
       where "id" = ? and "deleted_at" is null returning "failing_since", "enabled"`,
      [quietSince, quietSince, now, now, sub.id],
    );
    const failingSince = row?.failing_since ? new Date(row.failing_since) : null;
    if (row?.enabled && failingSince && shouldDisable(failingSince, now)) {
      // Read under the row lock the streak's update took: enabled as committed, not as the
      // attempt began. Flushed by the unit of work, which moves updated_at.
      const subscription = await tx.findOneOrFail(WebhookSubscription, sub.id);
      if (subscription.enabled) {
        subscription.enabled = false;
        subscription.disabledAt = now;
        subscription.disabledReason = disabledReason(failingSince);
        disabled = true;
      }
    }
    // A manual attempt (retry, recover) is one attempt; the scheduled ones follow the schedule.
    const delay =
      row?.enabled && !disabled && job.trigger === 'scheduled'
        ? retryDelaySeconds(job.attempt, deps.random?.())
        : null;
    if (delay != null) {
      nextAttemptAt = new Date(now.getTime() + delay * 1000);
      await enqueueDeliveries(tx, [{ ...job, attempt: job.attempt + 1, trigger: 'scheduled' }], delay);
    }
    const delivery = await tx.insert(WebhookDelivery, {
      clinic: sub.clinicId,
      subscription: sub.id,
      event: job.event,
      trigger: job.trigger,
      status: 'failed',
      attempt: job.attempt,
      attemptedAt,
      nextAttemptAt,
      responseStatus: result.status,
      responseExcerpt: result.body == null ? null : responseExcerpt(result.body),
      error: result.error,
      durationMs: result.durationMs,
      createdAt: now,
      updatedAt: now,
    } as any);
    return {
      outcome: 'failed',
      delivery: Number(delivery),
      result,
      nextAttemptAt,
      disabled,
    };
  });
  return recorded.catch((err) => {
    if (err instanceof LapsedClaim) return lapsed;
    throw err;
  });
}
