import type { JobResult } from 'pg-boss';
import type { CappedWorkerDefinition } from '../lib/capped-worker.ts';
import { asQueuedBy, scopeLog } from '../lib/job-scope.ts';
import { DELIVERY_QUEUE, type DeliveryJob, deliverySlots } from '../services/webhooks/delivery-jobs.ts';
import { type AttemptDeps, attemptDelivery, readAttempts } from './attempt.ts';

/**
 * The delivery queue's worker (issue 17): each job one attempt (src/webhooks/attempt.ts). An
 * attempt that fails at the receiver completes its job (the schedule queues the next one as a new
 * job); only an attempt that could not be recorded (the database away) fails its job, for
 * pg-boss to run again. A worker killed mid-attempt stops its heartbeat, and pg-boss gives the
 * job to another worker after `heartbeatSeconds` (src/services/webhooks/delivery-jobs.ts); its
 * subscriptions' slots are free the moment it dies (src/lib/group-slots.ts).
 */
export interface DeliveryWorkerOptions extends AttemptDeps {
  /** Jobs claimed at once per poller; they are attempted in parallel. */
  batchSize?: number;
  /** Pollers in this process (each with its batch in hand); one that found jobs claims again at once. */
  pollers?: number;
  /**
   * Attempts of one subscription under way at once, across every worker process: a slow or dead
   * receiver holds at most this many slots, never the others' (src/lib/group-slots.ts).
   */
  perSubscription?: number;
}

/**
 * Batches of 8 (one read for the batch, successes written together: docs/performance.md,
 * Deliveries): each job is settled in the statement that records its attempt, and gives its slot
 * back, as soon as it ends, so a hanging receiver's job holds its poller until it times out but
 * never its batch-mates (nor their subscriptions' slots). 32 pollers: with at most 4 attempts of
 * one subscription under way, it takes 8 hanging subscriptions at once to hold them all.
 */
export const DELIVERY_DEFAULTS = { batchSize: 8, pollers: 32, perSubscription: 4 } as const;

export function deliveryWorker(opts: DeliveryWorkerOptions): CappedWorkerDefinition<DeliveryJob> {
  return {
    queue: DELIVERY_QUEUE,
    cap: deliverySlots(opts.perSubscription ?? DELIVERY_DEFAULTS.perSubscription),
    pollers: opts.pollers ?? DELIVERY_DEFAULTS.pollers,
    batchSize: opts.batchSize ?? DELIVERY_DEFAULTS.batchSize,
    // NOTIFY wakes a poller for a new job, and a slot given back in this process wakes one; not a
    // retry whose time has come, nor a slot another process gave back: the backstop finds those.
    pollIntervalMs: 2_000,
    handle(jobs) {
      // One read for the batch; each job then goes its own way, recorded and settled as it ends.
      const reads = readAttempts(
        opts.em,
        jobs.map((j) => j.data),
      );
      // Each job as the request that queued it: its log lines carry that request's id.
      return jobs.map((job, i) =>
        asQueuedBy(job.data, async (): Promise<JobResult | null> => {
          try {
            const claim = { id: job.id, retryCount: job.retryCount };
            const done = await attemptDelivery(opts, job.data, claim, (await reads)[i]);
            // An attempt completes its job in the statement that records it (or lost the claim to
            // another worker); a job with nothing to attempt is completed by the worker.
            return done.outcome === 'skipped' && !done.lapsed ? { id: job.id, status: 'completed' } : null;
          } catch (err) {
            scopeLog().error({ err, job: job.id, data: job.data }, 'webhook delivery attempt not recorded');
            return { id: job.id, status: 'failed', output: { message: (err as Error).message } };
          }
        }),
      );
    },
  };
}
