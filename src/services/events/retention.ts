import type { EntityManager } from '@mikro-orm/postgresql';
import type { Clock } from '../../lib/clock.ts';
import { logger } from '../../lib/logger.ts';

/**
 * Event retention (docs/limits.md, Events): events older than the retention period are deleted,
 * every clinic's, with their webhook deliveries (the foreign key cascades). The outbox is a
 * log to catch up from and to retry deliveries from (retries end after about a day), not an
 * archive: each object stays readable by id for as long as it exists.
 */
const DAY_MS = 86_400_000;

/** Rows per DELETE: each batch is its own short statement, so a backlog never holds long locks. */
export const PRUNE_BATCH = 1_000;

/** How often the service sweeps; the first sweep comes one interval after start. */
export const PRUNE_INTERVAL_MS = 3_600_000;

/** At most this many batches per sweep (a million events), so one sweep's work stays bounded. */
const MAX_BATCHES_PER_SWEEP = 1_000;

/** The oldest `created_at` kept at `now`. */
export const retentionCutoff = (now: Date, days: number): Date => new Date(now.getTime() - days * DAY_MS);

/**
 * Deletes the events created before `before`, oldest first, in batches of `batch`, and their
 * deliveries with them; answers how many events went. Rows another sweep (another instance)
 * is deleting are skipped, not waited for.
 */
export async function pruneEvents(
  em: EntityManager,
  before: Date,
  opts: { batch?: number; maxBatches?: number } = {},
): Promise<number> {
  const batch = opts.batch ?? PRUNE_BATCH;
  const maxBatches = opts.maxBatches ?? MAX_BATCHES_PER_SWEEP;
  const conn = em.getConnection();
  let deleted = 0;
  for (let i = 0; i < maxBatches; i++) {
    const res = await conn.execute<{ affectedRows: number }>(
      `delete from "event" where "id" in (
         select "id" from "event" where "created_at" < ? order by "created_at" limit ? for update skip locked)`,
      [before, batch],
      'run',
    );
    deleted += res.affectedRows;
    if (res.affectedRows < batch) break;
  }
  return deleted;
}

export interface EventRetention {
  /** One sweep now, at the clock's time (tests drive it with the injected clock). */
  sweep(): Promise<number>;
  /** Stops the timer and waits for a sweep under way. */
  stop(): Promise<void>;
}

/**
 * The service's periodic sweep: a timer that does not keep the process alive, stopped on
 * shutdown. `days` 0 keeps events for ever (no timer).
 */
export function startEventRetention(opts: {
  em: EntityManager;
  clock: Clock;
  days: number;
  intervalMs?: number;
}): EventRetention {
  let running: Promise<number> | null = null;
  const sweep = (): Promise<number> => {
    running ??= pruneEvents(opts.em, retentionCutoff(opts.clock.now(), opts.days)).finally(() => {
      running = null;
    });
    return running;
  };
  const timer =
    opts.days > 0
      ? setInterval(() => {
          sweep().then(
            (n) => n && logger.info({ deleted: n, retention_days: opts.days }, 'old events deleted'),
            (err) => logger.warn({ err }, 'event retention sweep failed; the next one retries'),
          );
        }, opts.intervalMs ?? PRUNE_INTERVAL_MS)
      : undefined;
  timer?.unref();
  return {
    sweep: () => (opts.days > 0 ? sweep() : Promise.resolve(0)),
    async stop() {
      clearInterval(timer);
      await running?.catch(() => {});
    },
  };
}
