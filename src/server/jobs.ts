import type { MikroORM } from '@mikro-orm/postgresql';
import { type Clock, systemClock } from '../lib/clock.ts';
import {
  type AnyWorkerDefinition,
  attachJobQueue,
  detachJobQueue,
  type JobQueue,
  type QueueDefinition,
  startJobQueue,
} from '../lib/job-queue.ts';
import { sessionUrlOf } from '../lib/session-url.ts';
import { sandboxReceiptsQueue } from '../network/sandbox-receipts.ts';
import { sendFailedQueue, sendQueue } from '../services/chat/send-jobs.ts';
import { deliveryQueue } from '../services/webhooks/delivery-jobs.ts';
// Every process that writes starts its queues here: the outbox's fan-out to webhooks comes with them.
import '../services/webhooks/event-deliveries.ts';
import { runSystem } from './runner.ts';
import { type RunningSweeps, SWEEP_QUEUES, startSweeps } from './sweeps.ts';

/**
 * The service's queues and their workers (src/lib/job-queue.ts): started by every process that
 * writes (the server, `npm run worker`, the CLI), so a write can queue its jobs; workers run
 * where the process's roles say (src/server/role-jobs.ts, src/lib/roles.ts).
 */
// A dead-letter queue before the queue that names it (pg-boss checks it exists).
// The sandbox network's receipts too: it stands for the network, whose receipts outlive us.
export const QUEUES: readonly QueueDefinition[] = [
  deliveryQueue,
  sendFailedQueue,
  sendQueue,
  sandboxReceiptsQueue,
  ...SWEEP_QUEUES,
];

export interface RunningJobs {
  queue: JobQueue;
  /** The cluster's sweeps, when this process sets them (src/server/sweeps.ts). */
  sweeps?: RunningSweeps;
  stop(graceMs?: number): Promise<void>;
}

/**
 * Faster failure detection than the defaults (heartbeat 30 s, supervision every 60 s: a killed
 * worker's job runs again within about 100 s): the SIGKILL test's, never lower in production.
 */
export interface QueueTuning {
  /** How often this process looks for jobs whose worker stopped heartbeating (QUEUE_SUPERVISE_SECONDS). */
  superviseSeconds?: number;
  /** The delivery queue's heartbeat contract, at least 10 s (DELIVERY_HEARTBEAT_SECONDS). */
  deliveryHeartbeatSeconds?: number;
  /** Both sweeps' period instead of an hour (SWEEP_INTERVAL_SECONDS): the cluster test's. */
  sweepSeconds?: number;
}

/**
 * The tuning of QUEUE_SUPERVISE_SECONDS and DELIVERY_HEARTBEAT_SECONDS, for every process that
 * starts the queue (`npm start` and `npm run worker` alike): each start sets the delivery queue's
 * heartbeat, so processes started with different values would reset each other's.
 */
export function queueTuningOf(config: {
  QUEUE_SUPERVISE_SECONDS?: number | undefined;
  DELIVERY_HEARTBEAT_SECONDS?: number | undefined;
  SWEEP_INTERVAL_SECONDS?: number | undefined;
}): QueueTuning {
  return {
    ...(config.QUEUE_SUPERVISE_SECONDS ? { superviseSeconds: config.QUEUE_SUPERVISE_SECONDS } : {}),
    ...(config.DELIVERY_HEARTBEAT_SECONDS
      ? { deliveryHeartbeatSeconds: config.DELIVERY_HEARTBEAT_SECONDS }
      : {}),
    ...(config.SWEEP_INTERVAL_SECONDS ? { sweepSeconds: config.SWEEP_INTERVAL_SECONDS } : {}),
  };
}

export async function startJobs(opts: {
  orm: MikroORM;
  workers?: readonly AnyWorkerDefinition[];
  /** The workers' clock (the server's injected one): their jobs run in its system scope. */
  clock?: Clock;
  tuning?: QueueTuning;
  /**
   * The cluster's sweeps: their schedules set (events kept `retentionDays`), and run here when
   * `work` (the sweeps role). Absent: neither (the CLI, the tests' template).
   */
  sweeps?: { retentionDays: number; work: boolean };
}): Promise<RunningJobs> {
  const heartbeat = opts.tuning?.deliveryHeartbeatSeconds;
  const clock = opts.clock ?? systemClock;
  const queue = await startJobQueue({
    databaseUrl: opts.orm.config.get('clientUrl'),
    sessionUrl: sessionUrlOf(opts.orm),
    queues: heartbeat
      ? QUEUES.map((q) =>
          q === deliveryQueue ? { ...q, options: { ...q.options, heartbeatSeconds: heartbeat } } : q,
        )
      : QUEUES,
    ...(opts.tuning?.superviseSeconds ? { superviseIntervalSeconds: opts.tuning.superviseSeconds } : {}),
    // Every job runs as the operation runner's system work: the injected clock, no request.
    runJob: (fn) => runSystem(clock, fn),
  });
  attachJobQueue(opts.orm.em, queue);
  if (opts.workers?.length) await queue.work(opts.workers);
  const sweeps = opts.sweeps
    ? await startSweeps({
        queue,
        em: opts.orm.em,
        clock,
        retentionDays: opts.sweeps.retentionDays,
        work: opts.sweeps.work,
        ...(opts.tuning?.sweepSeconds ? { everySeconds: opts.tuning.sweepSeconds } : {}),
      })
    : undefined;
  return {
    queue,
    ...(sweeps ? { sweeps } : {}),
    async stop(graceMs) {
      // The sweeps' timers first: none may ask the queue for a job once it is closing.
      await sweeps?.stop();
      await queue.stop(graceMs);
      detachJobQueue(opts.orm.em);
    },
  };
}

/** Creates the queue schema and the queues (a migrated template database for tests, `npm start`). */
export async function installJobs(orm: MikroORM): Promise<void> {
  const jobs = await startJobs({ orm });
  await jobs.stop(0);
}
