import { logger } from './logger.ts';

/**
 * A periodic clean-up of the database (old events, orphaned media files), run once per period
 * for the whole cluster, however many processes serve (docs/scale.md): each period's run is
 * one job on the job queue (src/server/sweeps.ts), taken by one process with the sweeps role.
 */
export interface SweepDefinition {
  /** The sweep's queue and schedule name. */
  name: string;
  /** Its period; null: never (the sweep is off, and `sweep` does nothing). */
  everySeconds: number | null;
  run(): Promise<number>;
  /** The log line of a sweep that removed something. */
  done(removed: number): void;
  /** What a failed sweep logs. */
  failed: string;
}

/** One sweep of this process: run now (tests drive it), or as the queue's job. */
export interface Sweeper {
  /** One sweep now; a sweep under way in this process is joined rather than started again. */
  sweep(): Promise<number>;
  /** Waits for a sweep under way. */
  stop(): Promise<void>;
}

export function sweeperOf(def: SweepDefinition): Sweeper {
  let running: Promise<number> | null = null;
  const sweep = (): Promise<number> => {
    running ??= def.run().finally(() => {
      running = null;
    });
    return running;
  };
  return {
    sweep: () => (def.everySeconds === null ? Promise.resolve(0) : sweep()),
    async stop() {
      await running?.catch(() => {});
    },
  };
}

/** The scheduled run: logs what it removed, and a failure (the next occurrence retries). */
export async function scheduledSweep(def: SweepDefinition, sweeper: Sweeper): Promise<void> {
  try {
    const n = await sweeper.sweep();
    if (n) def.done(n);
  } catch (err) {
    logger.warn({ err }, def.failed);
  }
}
