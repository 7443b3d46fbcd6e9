import type { EntityManager } from '@mikro-orm/postgresql';
import { Clinic, Event } from '../entities/index.ts';
import { isEventType } from '../events/types.ts';
import type { Principal } from '../lib/request-context.ts';
import type { Row } from './resource.ts';

/**
 * The one unit of work of every write (issue 16, groundwork): a transaction bound to one clinic
 * (its tenant filter set, whatever EntityManager the caller holds) in which the work changes
 * entities, then everything is flushed, then each event the work announced is recorded in the
 * outbox (`event`) through the same transaction, then it commits. A write therefore happens
 * whole with its events or not at all.
 *
 * Events are presented after the flush, not in MikroORM's `onFlush` (which runs before the
 * INSERTs, when new rows have no ids): their `data` is what a GET of the object answers after
 * the commit, read through this transaction with the write's own `now`.
 */
export interface Write {
  /** The transaction, bound to the clinic. */
  em: EntityManager;
  clinicId: number;
  /** The write's time: `updated_at` of what it changes and `created_at` of its events. */
  now: Date;
  /**
   * Announces an event of this write. `data` runs after the flush, inside the transaction; it
   * is given a service context that reads through the transaction as the clinic.
   */
  record(event: PendingEvent): void;
}

export interface PendingEvent {
  /** One of the catalog's (src/events/types.ts): checked when recorded. */
  type: string;
  /** The scope a reader of the event needs (chat.* events: chat:read). */
  scope: string;
  data: (reader: WriteReader) => Promise<Row>;
}

/** A service context for presenting inside the write: the transaction, the clinic, the write's time. */
export interface WriteReader {
  em: EntityManager;
  principal: Principal;
  clock: { now(): Date };
  /** What this transaction has presented (src/services/present-by-id.ts). */
  presented: Map<string, Row>;
}

/**
 * Runs `work` as one write of the clinic. With `answer`, what it answers is read after the flush
 * and the events, still inside the transaction: the written object as its event presents it.
 */
export async function clinicWrite<T>(
  em: EntityManager,
  clinicId: number,
  now: Date,
  work: (write: Write) => Promise<T>,
): Promise<T>;
export async function clinicWrite<T, A>(
  em: EntityManager,
  clinicId: number,
  now: Date,
  work: (write: Write) => Promise<T>,
  answer: (reader: WriteReader, result: T) => Promise<A>,
): Promise<A>;
export async function clinicWrite<T, A>(
  em: EntityManager,
  clinicId: number,
  now: Date,
  work: (write: Write) => Promise<T>,
  answer?: (reader: WriteReader, result: T) => Promise<A>,
): Promise<T | A> {
  // The caller's EntityManager when it is bound to the clinic already (a request's), else a fork
  // bound to it (the network callback and the CLI hold an unbound one).
  const bound = em.getFilterParams<{ clinicId?: number }>('tenant')?.clinicId;
  if (bound !== undefined && bound !== clinicId)
    throw new Error(`A write for clinic ${clinicId} on clinic ${bound}'s EntityManager.`);
  const target = bound === undefined ? em.fork({ clear: true }) : em;
  if (bound === undefined) target.setFilterParams('tenant', { clinicId });
  return target.transactional(async (tx) => {
    const pending: PendingEvent[] = [];
    const result = await work({ em: tx, clinicId, now, record: (e) => pending.push(e) });
    await tx.flush();
    if (!pending.length && !answer) return result;
    const reader = await readerOf(tx, clinicId, now);
    if (pending.length) await recordEvents(tx, reader, clinicId, now, pending);
    return answer ? answer(reader, result) : result;
  });
}

async function readerOf(tx: EntityManager, clinicId: number, now: Date): Promise<WriteReader> {
  const clinic = await tx.findOneOrFail(Clinic, clinicId, { fields: ['kind', 'country'] });
  return {
    em: tx,
    principal: {
      keyId: 'event',
      clinicId,
      clinicKind: clinic.kind,
      country: clinic.country,
      scopes: new Set(),
    },
    clock: { now: () => now },
    presented: new Map(),
  };
}

async function recordEvents(
  tx: EntityManager,
  reader: WriteReader,
  clinicId: number,
  now: Date,
  pending: PendingEvent[],
) {
  for (const e of pending) {
    // A type outside the catalog could never be listed, filtered or subscribed to.
    if (!isEventType(e.type))
      throw new Error(`Event type ${e.type} is not in the catalog (src/events/types.ts).`);
    tx.create(Event, {
      clinic: tx.getReference(Clinic, clinicId),
      type: e.type,
      scope: e.scope,
      data: await e.data(reader),
      createdAt: now,
    });
  }
  await tx.flush();
}
