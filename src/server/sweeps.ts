import type { EntityManager } from '@mikro-orm/postgresql';
import type { Clock } from '../lib/clock.ts';
import type { JobQueue, QueueDefinition } from '../lib/job-queue.ts';
import {
  cronOf,
  type SweepDefinition,
  type Sweeper,
  scheduledSweep,
  sweeperOf,
} from '../lib/periodic-sweep.ts';
import { MEDIA_ORPHANS_SWEEP, orphanMediaSweep } from '../media/orphans.ts';
import { EVENT_RETENTION_SWEEP, eventRetentionSweep } from '../services/events/retention.ts';

/** The cluster's sweeps by name, each runnable at once in this process (tests drive them). */
export interface RunningSweeps {
  eventRetention: Sweeper;
  mediaSweep: Sweeper;
  stop(): Promise<void>;
}

/** The names of the cluster's sweeps: one queue and one schedule each. */
export const SWEEP_NAMES = [EVENT_RETENTION_SWEEP, MEDIA_ORPHANS_SWEEP] as const;

/**
 * A sweep's queue keeps at most one job waiting ('short'): occurrences that come while one waits
 * (every worker busy, none running the sweeps role) are one sweep, not a pile.
 */
export const SWEEP_QUEUES: readonly QueueDefinition[] = SWEEP_NAMES.map((name) => ({
  name,
  options: { policy: 'short', retryLimit: 0, expireInSeconds: 15 * 60 },
}));

/**
 * The cluster's sweeps (docs/scale.md, One cluster): every process that starts the queue sets the
 * schedules (pg-boss's cron pass, claimed by one instance per pass, sends each occurrence's job
 * once), and processes with the sweeps role run them. N processes sweep once per period, not N
 * times. `everySeconds` (SWEEP_INTERVAL_SECONDS) shortens both periods for tests.
 */
export async function startSweeps(opts: {
  queue: JobQueue;
  em: EntityManager;
  clock: Clock;
  retentionDays: number;
  /** Whether this process runs the sweeps (the sweeps role). */
  work: boolean;
  everySeconds?: number;
}): Promise<RunningSweeps> {
  const every = opts.everySeconds ? { everySeconds: opts.everySeconds } : {};
  const retention = eventRetentionSweep({
    em: opts.em,
    clock: opts.clock,
    days: opts.retentionDays,
    ...every,
  });
  const media = orphanMediaSweep({ em: opts.em, clock: opts.clock, ...every });
  const defs: SweepDefinition[] = [retention, media];
  const sweepers = new Map(defs.map((d) => [d.name, sweeperOf(d)]));
  for (const def of defs) {
    if (def.everySeconds === null) await opts.queue.unschedule(def.name);
    else await opts.queue.schedule(def.name, cronOf(def.everySeconds));
  }
  if (opts.work)
    await opts.queue.work(
      defs.map((def) => ({
        queue: def.name,
        options: { batchSize: 1 },
        handler: () => scheduledSweep(def, sweepers.get(def.name) as Sweeper),
      })),
    );
  return {
    eventRetention: sweepers.get(retention.name) as Sweeper,
    mediaSweep: sweepers.get(media.name) as Sweeper,
    async stop() {
      await Promise.all([...sweepers.values()].map((s) => s.stop()));
    },
  };
}
