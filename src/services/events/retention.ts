import type { EntityManager } from '@mikro-orm/postgresql';
import { deleteInBatches } from '../../db/batched-delete.ts';
import type { Clock } from '../../lib/clock.ts';
import { logger } from '../../lib/logger.ts';
import type { SweepDefinition } from '../../lib/periodic-sweep.ts';

/**
 * Event retention (docs/limits.md, Events): events older than the retention period are deleted,
 * every clinic's, with their webhook deliveries (the foreign key cascades). The outbox is a
 * log to catch up from and to retry deliveries from (retries end after about a day), not an
 * archive: each object stays readable by id for as long as it exists.
 */
const DAY_MS = 86_400_000;

/** Rows per DELETE: each batch is its own short statement, so a backlog never holds long locks. */
export const PRUNE_BATCH = 1_000;

/** How often the cluster sweeps (once an hour for the whole cluster: src/server/sweeps.ts). */
export const PRUNE_INTERVAL_SECONDS = 3600;

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

export const EVENT_RETENTION_SWEEP = 'sweep.event-retention';

/** The cluster's sweep (src/lib/periodic-sweep.ts). `days` 0 keeps events for ever (no sweep). */
export function eventRetentionSweep(opts: {
  em: EntityManager;
  clock: Clock;
  days: number;
  everySeconds?: number;
}): SweepDefinition {
  return {
    name: EVENT_RETENTION_SWEEP,
    everySeconds: opts.days > 0 ? (opts.everySeconds ?? PRUNE_INTERVAL_SECONDS) : null,
    run: () => pruneEvents(opts.em, retentionCutoff(opts.clock.now(), opts.days)),
    done: (n) => logger.info({ deleted: n, retention_days: opts.days }, 'old events deleted'),
    failed: 'event retention sweep failed; the next one retries',
  };
}
