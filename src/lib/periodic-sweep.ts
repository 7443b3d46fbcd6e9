import { logger } from './logger.ts';

/** A periodic clean-up of the database (old events, orphaned media files). */
export interface Sweeper {
  /** One sweep now (tests drive it); a sweep under way is joined rather than started again. */
  sweep(): Promise<number>;
  /** Stops the timer and waits for a sweep under way. */
  stop(): Promise<void>;
}

/**
 * Runs `run` every `intervalMs` (null: never, and `sweep` does nothing), one sweep at a time, on
 * a timer that does not keep the process alive. A failed sweep is logged; the next one retries.
 */
export function startSweeper(opts: {
  intervalMs: number | null;
  run: () => Promise<number>;
  /** The log line of a sweep that removed something. */
  done: (removed: number) => void;
  /** What a failed sweep logs. */
  failed: string;
}): Sweeper {
  let running: Promise<number> | null = null;
  const sweep = (): Promise<number> => {
    running ??= opts.run().finally(() => {
      running = null;
    });
    return running;
  };
  const timer =
    opts.intervalMs === null
      ? undefined
      : setInterval(() => {
          sweep().then(
            (n) => n && opts.done(n),
            (err) => logger.warn({ err }, opts.failed),
          );
        }, opts.intervalMs);
  timer?.unref();
  return {
    sweep: () => (opts.intervalMs === null ? Promise.resolve(0) : sweep()),
    async stop() {
      clearInterval(timer);
      await running?.catch(() => {});
    },
  };
}
