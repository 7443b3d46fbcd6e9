import type { EntityManager } from '@mikro-orm/postgresql';
import { deleteInBatches } from '../../db/batched-delete.ts';
import type { Clock } from '../../lib/clock.ts';
import { logger } from '../../lib/logger.ts';
import { type Sweeper, startSweeper } from '../../lib/periodic-sweep.ts';

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
  return deleteInBatches(
    em,
    'event',
    'select "id" from "event" where "created_at" < ? order by "created_at" limit ? for update skip locked',
    [before],
    { batch: opts.batch ?? PRUNE_BATCH, maxBatches: opts.maxBatches ?? MAX_BATCHES_PER_SWEEP },
  );
}

export type EventRetention = Sweeper;

/**
 * The service's periodic sweep (src/lib/periodic-sweep.ts), stopped on shutdown. `days` 0 keeps
 * events for ever (no timer).
 */
export function startEventRetention(opts: {
  em: EntityManager;
  clock: Clock;
  days: number;
  intervalMs?: number;
}): EventRetention {
  return startSweeper({
    intervalMs: opts.days > 0 ? (opts.intervalMs ?? PRUNE_INTERVAL_MS) : null,
    run: () => pruneEvents(opts.em, retentionCutoff(opts.clock.now(), opts.days)),
    done: (n) => logger.info({ deleted: n, retention_days: opts.days }, 'old events deleted'),
    failed: 'event retention sweep failed; the next one retries',
  });
}
