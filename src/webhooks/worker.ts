import type { JobResult } from 'pg-boss';
import type { WorkerDefinition } from '../lib/job-queue.ts';
import { logger } from '../lib/logger.ts';
import { DELIVERY_QUEUE, type DeliveryJob } from '../services/webhooks/delivery-jobs.ts';
import { type AttemptDeps, attemptDelivery, readAttempts } from './attempt.ts';

/**
 * The delivery queue's worker (issue 17): each job one attempt (src/webhooks/attempt.ts). An
 * attempt that fails at the receiver completes its job (the schedule queues the next one as a new
 * job); only an attempt that could not be recorded (the database away) fails its job, for
 * pg-boss to run again. A worker killed mid-attempt stops its heartbeat, and pg-boss gives the
 * job to another worker after `heartbeatSeconds` (src/services/webhooks/delivery-jobs.ts).
 */
export interface DeliveryWorkerOptions extends AttemptDeps {
  /** Jobs fetched at once per poller; they are attempted in parallel. */
  batchSize?: number;
  /** Pollers in this process (each with its batch in hand); one that found jobs fetches again at once. */
  pollers?: number;
  /**
   * Attempts of one subscription under way at once, across every worker process: a slow or dead
   * receiver holds at most this many slots, never the others' (pg-boss groups, one per subscription).
   */
  perSubscription?: number;
}

/**
 * Batches of 8 (one read for the batch, successes written together: docs/performance.md,
 * Deliveries): each job is settled in the statement that records its attempt, as soon as it ends,
 * so a hanging receiver's job holds its poller until it times out but never its batch-mates (nor
 * their subscriptions' group slots). 32 pollers: with at most 4 attempts of one subscription under
 * way, it takes 8 hanging subscriptions at once to hold them all.
 */
export const DELIVERY_DEFAULTS = { batchSize: 8, pollers: 32, perSubscription: 4 } as const;

export function deliveryWorker(opts: DeliveryWorkerOptions): WorkerDefinition<DeliveryJob> {
  const perSubscription = opts.perSubscription ?? DELIVERY_DEFAULTS.perSubscription;
  return {
    queue: DELIVERY_QUEUE,
    pollers: opts.pollers ?? DELIVERY_DEFAULTS.pollers,
    options: {
      batchSize: opts.batchSize ?? DELIVERY_DEFAULTS.batchSize,
      groupConcurrency: perSubscription,
      perJobResults: true,
      // NOTIFY wakes workers for new jobs, not for a retry whose time has come, nor for jobs a
      // full group held back: the backstop poll finds those within two seconds.
      notifyPollingIntervalSeconds: 2,
      pollingIntervalSeconds: 2,
    },
    handler: async (jobs) => {
      // One read for the batch; each job then goes its own way, recorded and settled as it ends.
      const reads = await readAttempts(
        opts.em,
        jobs.map((j) => j.data),
      );
      return Promise.all(
        jobs.map(async (job, i): Promise<JobResult> => {
          try {
            await attemptDelivery(opts, job.data, { id: job.id, retryCount: job.retryCount }, reads[i]);
            return { id: job.id, status: 'completed' };
          } catch (err) {
            logger.error({ err, job: job.id, data: job.data }, 'webhook delivery attempt not recorded');
            return { id: job.id, status: 'failed', output: { message: (err as Error).message } };
          }
        }),
      );
    },
  };
}
