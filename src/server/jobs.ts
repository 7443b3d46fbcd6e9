import type { MikroORM } from '@mikro-orm/postgresql';
import {
  attachJobQueue,
  detachJobQueue,
  type JobQueue,
  type QueueDefinition,
  startJobQueue,
  type WorkerDefinition,
} from '../lib/job-queue.ts';
import { deliveryQueue } from '../services/webhooks/delivery-jobs.ts';

/**
 * The service's queues and their workers (src/lib/job-queue.ts): started by every process that
 * writes (the server, `npm run worker`, the CLI), so a write can queue its jobs; workers run
 * where `work` is on (the server by default, WORKERS=off to leave them to `npm run worker`).
 */
export const QUEUES: readonly QueueDefinition[] = [deliveryQueue];

export interface RunningJobs {
  queue: JobQueue;
  stop(graceMs?: number): Promise<void>;
}

export async function startJobs(opts: {
  orm: MikroORM;
  workers?: readonly WorkerDefinition[];
}): Promise<RunningJobs> {
  const queue = await startJobQueue({ databaseUrl: opts.orm.config.get('clientUrl'), queues: QUEUES });
  attachJobQueue(opts.orm.em, queue);
  if (opts.workers?.length) await queue.work(opts.workers);
  return {
    queue,
    async stop(graceMs) {
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
