import type { EntityManager } from '@mikro-orm/postgresql';
import type { Clock } from '../lib/clock.ts';
import type { JobQueue, QueueDefinition } from '../lib/job-queue.ts';
import { logger } from '../lib/logger.ts';
import { type SweepDefinition, type Sweeper, scheduledSweep, sweeperOf } from '../lib/periodic-sweep.ts';
import { MEDIA_ORPHANS_SWEEP, orphanMediaSweep } from '../media/orphans.ts';
import { EVENT_RETENTION_SWEEP, eventRetentionSweep } from '../services/events/retention.ts';

/** The cluster's sweeps by name, each runnable at once in this process (tests drive them). */
export interface RunningSweeps {
  eventRetention: Sweeper;
  mediaSweep: Sweeper;
  stop(): Promise<void>;
}

/** The cluster's sweeps: one queue each. A sweep that fails is not retried: the next period's is. */
export const SWEEP_QUEUES: readonly QueueDefinition[] = [EVENT_RETENTION_SWEEP, MEDIA_ORPHANS_SWEEP].map(
  (name) => ({
    name,
    options: { retryLimit: 0, expireInSeconds: 15 * 60 },
  }),
);

/**
 * The cluster's sweeps (docs/scale.md, One cluster). Every process that starts the queue asks
 * for each sweep once a period; the queue keeps one job per period of the database's clock
 * (`sendOncePer`), so N processes sweep once a period, not N times, and the sweeps go on while
 * any process runs. Processes with the sweeps role (`work`) take the jobs. `everySeconds`
 * (SWEEP_INTERVAL_SECONDS) shortens both periods for tests.
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
  const scheduled = defs.flatMap((def) => {
    const seconds = def.everySeconds;
    return seconds === null ? [] : [{ def, seconds }];
  });
  const ask = ({ def, seconds }: (typeof scheduled)[number]) =>
    opts.queue
      .sendOncePer(def.name, seconds)
      .catch((err) => logger.warn({ err }, `${def.failed} (not queued)`));
  if (opts.work)
    await opts.queue.work(
      defs.map((def) => ({
        queue: def.name,
        options: { batchSize: 1 },
        handler: () => scheduledSweep(def, sweepers.get(def.name) as Sweeper),
      })),
    );
  // This period's sweep is asked for at start too: processes restarted more often than the period
  // would otherwise never sweep. The queue keeps it once per period all the same.
  const asking = Promise.all(scheduled.map(ask));
  const timers = scheduled.map((s) => {
    const timer = setInterval(() => void ask(s), s.seconds * 1000);
    timer.unref();
    return timer;
  });
  return {
    eventRetention: sweepers.get(retention.name) as Sweeper,
    mediaSweep: sweepers.get(media.name) as Sweeper,
    async stop() {
      for (const t of timers) clearInterval(t);
      await asking;
      await Promise.all([...sweepers.values()].map((s) => s.stop()));
    },
  };
}
