import type { EntityManager } from '@mikro-orm/postgresql';
import { deleteInBatches } from '../db/batched-delete.ts';
import type { Clock } from '../lib/clock.ts';
import { logger } from '../lib/logger.ts';
import type { SweepDefinition } from '../lib/periodic-sweep.ts';

/**
 * Files the store keeps that nothing refers to are deleted. A file is stored before the write
 * that refers to it (a download takes seconds, too long to hold a transaction open: see
 * addCallRecording and sendMessage), so some are never referred to: the write failed or lost a
 * race, or the network posted the same inbound media twice. Only a message's media or a call's
 * recording refers to a file, by its key `med_<id>`, in the file's own clinic.
 */

/** A file younger than this is never deleted: the write that stored it may still be under way. */
export const ORPHAN_GRACE_MS = 86_400_000;

/** How often the cluster sweeps (once an hour for the whole cluster: src/server/sweeps.ts). */
export const ORPHAN_SWEEP_INTERVAL_SECONDS = 3600;

const BATCH = 500;
const MAX_BATCHES_PER_SWEEP = 200;

/** Deletes the files created before `before` that no message or call refers to; answers how many. */
export function pruneOrphanMedia(
  em: EntityManager,
  before: Date,
  opts: { batch?: number; maxBatches?: number } = {},
): Promise<number> {
  return deleteInBatches(
    em,
    'media_object',
    `select o."id" from "media_object" o
      where o."created_at" < ?
        and not exists (select 1 from "message" m
                         where m."clinic_id" = o."clinic_id" and m."media_path" = 'med_' || o."id")
        and not exists (select 1 from "call" c
                         where c."clinic_id" = o."clinic_id" and c."recording_path" = 'med_' || o."id")
      order by o."id" limit ? for update of o skip locked`,
    [before],
    { batch: opts.batch ?? BATCH, maxBatches: opts.maxBatches ?? MAX_BATCHES_PER_SWEEP },
  );
}

export const MEDIA_ORPHANS_SWEEP = 'sweep.media-orphans';

/** The cluster's sweep (src/lib/periodic-sweep.ts). */
export function orphanMediaSweep(opts: {
  em: EntityManager;
  clock: Clock;
  everySeconds?: number;
}): SweepDefinition {
  return {
    name: MEDIA_ORPHANS_SWEEP,
    everySeconds: opts.everySeconds ?? ORPHAN_SWEEP_INTERVAL_SECONDS,
    run: () => pruneOrphanMedia(opts.em, new Date(opts.clock.now().getTime() - ORPHAN_GRACE_MS)),
    done: (n) => logger.info({ deleted: n }, 'unreferenced media files deleted'),
    failed: 'media sweep failed; the next one retries',
  };
}
