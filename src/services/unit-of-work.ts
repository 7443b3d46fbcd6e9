import type { EntityManager } from '@mikro-orm/postgresql';
import { runNamed, statementOf } from '../db/named-statements.ts';
import { Clinic, type ClinicKind } from '../entities/index.ts';
import { isEventType } from '../events/types.ts';
import type { ClinicMode } from '../lib/clinic-mode.ts';
import { cached2 } from '../lib/memo.ts';
import { atWriteTime, currentRequest, type Principal } from '../lib/request-context.ts';
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
  clinic: number | KnownClinic,
  now: Date,
  work: (write: Write) => Promise<T>,
): Promise<T>;
export async function clinicWrite<T, A>(
  em: EntityManager,
  clinic: number | KnownClinic,
  now: Date,
  work: (write: Write) => Promise<T>,
  answer: (reader: WriteReader, result: T) => Promise<A>,
): Promise<A>;
export async function clinicWrite<T, A>(
  em: EntityManager,
  clinic: number | KnownClinic,
  now: Date,
  work: (write: Write) => Promise<T>,
  answer?: (reader: WriteReader, result: T) => Promise<A>,
): Promise<T | A> {
  const clinicId = typeof clinic === 'number' ? clinic : clinic.id;
  // The caller's EntityManager when it is bound to the clinic already (a request's), else a fork
  // bound to it (the network callback and the CLI hold an unbound one).
  const bound = em.getFilterParams<{ clinicId?: number }>('tenant')?.clinicId;
  if (bound !== undefined && bound !== clinicId)
    throw new Error(`A write for clinic ${clinicId} on clinic ${bound}'s EntityManager.`);
  const target = bound === undefined ? em.fork({ clear: true }) : em;
  if (bound === undefined) target.setFilterParams('tenant', { clinicId });
  // The write's own time for every timestamp it sets, so rows and events carry one instant.
  const committed = await atWriteTime(now, () =>
    target.transactional(async (tx) => {
      const pending: PendingEvent[] = [];
      const result = await work({ em: tx, clinicId, now, record: (e) => pending.push(e) });
      await tx.flush();
      if (!pending.length && !answer) return result;
      const reader = await readerOf(tx, clinic, now);
      if (pending.length) await recordEvents(tx, reader, clinicId, now, pending);
      return answer ? answer(reader, result) : result;
    }),
  );
  // Counted on the request: a request that fails after a write committed must not free its
  // Idempotency-Key for a retry that would write again (src/services/idempotency.ts).
  const request = currentRequest();
  if (request) request.committedWrites = (request.committedWrites ?? 0) + 1;
  return committed;
}

/** What presenting needs of the clinic, when the caller knows it already (a request's key does). */
export interface KnownClinic {
  id: number;
  kind: ClinicKind;
  country: string;
  mode: ClinicMode;
}

async function readerOf(tx: EntityManager, known: number | KnownClinic, now: Date): Promise<WriteReader> {
  const clinicId = typeof known === 'number' ? known : known.id;
  const clinic =
    typeof known === 'number'
      ? await tx.findOneOrFail(Clinic, clinicId, { fields: ['kind', 'country', 'mode'] })
      : known;
  return {
    em: tx,
    principal: {
      keyId: 'event',
      clinicId,
      clinicKind: clinic.kind,
      clinicMode: clinic.mode,
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
  const events: OutboxEvent[] = [];
  for (const e of pending) {
    // A type outside the catalog could never be listed, filtered or subscribed to.
    if (!isEventType(e.type))
      throw new Error(`Event type ${e.type} is not in the catalog (src/events/types.ts).`);
    events.push({ type: e.type, scope: e.scope, data: await e.data(reader) });
  }
  const due = await insertEvents(tx, clinicId, now, events);
  await registeredFanOut().queue(
    tx,
    due.filter((d) => d.target != null).map((d) => ({ event: d.id, target: d.target as number })),
  );
}

/**
 * Who else an event is for, found by the outbox insert itself (one statement, no second round
 * trip per write) and owed something queued in the write's transaction. The unit of work knows no
 * domain: the webhooks register the one the app has (src/services/webhooks/event-deliveries.ts,
 * loaded by every process that writes through src/server/jobs.ts).
 */
export interface EventFanOut {
  /**
   * The `from ... on ...` of a left join onto the inserted events `"ev"` (`"id"`, `"type"`); its
   * one parameter is the clinic.
   */
  join: string;
  /** The id of the joined target, null where an event has none. */
  target: string;
  /** Queues each (event, target) found, in the write's transaction `tx`. */
  queue(tx: EntityManager, due: { event: number; target: number }[]): Promise<void>;
}

let fanOut: EventFanOut | undefined;

/** Sets the outbox's fan-out: once per process (a second, different one is a wiring mistake). */
export function setEventFanOut(next: EventFanOut): void {
  if (fanOut && fanOut !== next) throw new Error('The outbox has a fan-out already.');
  fanOut = next;
}

// Loudly: a write whose events reached no subscriber because a module was not loaded would pass
// every test that has none.
function registeredFanOut(): EventFanOut {
  if (!fanOut)
    throw new Error(
      'The outbox has no fan-out: load src/services/webhooks/event-deliveries.ts (src/server/jobs.ts does).',
    );
  return fanOut;
}

/** An event as the outbox records it: its `data` presented already. */
export interface OutboxEvent {
  type: string;
  scope: string;
  data: Row;
}

/**
 * Sample events (src/services/webhooks/sample-events.ts) are marked `test`, and go only to the
 * fan-out's targets that `among` (a further condition of its join, with its params) also names.
 */
export interface SampleMark {
  among: { sql: string; params: readonly unknown[] };
}

/**
 * The one outbox insert, of real events and samples: the rows in, through `tx`, answering each
 * event's id with each target of the fan-out it is for, or null. One statement, outside the
 * unit of work (nothing reads these rows back in the write, and a flush would compare every
 * entity the write loaded once more), so deliveries are queued in this same transaction.
 */
export async function insertEvents(
  tx: EntityManager,
  clinicId: number,
  now: Date,
  events: readonly OutboxEvent[],
  sample?: SampleMark,
): Promise<{ id: number; target: number | null }[]> {
  const params: unknown[] = [];
  for (const e of events) params.push(clinicId, e.type, e.scope, JSON.stringify(e.data), now);
  params.push(clinicId, ...(sample?.among.params ?? []));
  const sql = insertEventsSql(events.length, registeredFanOut(), sample?.among.sql);
  const { rows } = await runNamed(tx, statementOf(sql), params);
  return (rows as { id: number | string; target: number | null }[]).map((r) => ({
    id: Number(r.id),
    target: r.target,
  }));
}

/**
 * The outbox insert of `count` events (params per event: clinic, type, scope, data as JSON text,
 * created_at; then the clinic, then `sampleAmong`'s), answering each event's id with each target
 * of `fanOut` it is for, or null: the bench's raw server runs the same statement
 * (bench/booking-sql.ts). With `sampleAmong`, the rows are marked `test` and go only to the
 * targets it also names.
 */
const insertEventsStatements = new WeakMap<EventFanOut, Map<string, string>>();
export const insertEventsSql = (count: number, fanOut: EventFanOut, sampleAmong?: string) =>
  cached2(insertEventsStatements, fanOut, `${count} ${sampleAmong ?? ''}`, () => {
    const sample = sampleAmong !== undefined;
    const row = `(?, ?, ?, ?, ?${sample ? ', true' : ''})`;
    const values = Array.from({ length: count }, () => row).join(', ');
    return `with "ev" as (insert into "event" ("clinic_id", "type", "scope", "data", "created_at"${sample ? ', "test"' : ''}) values ${values} returning "id", "type") select "ev"."id", ${fanOut.target} as "target" from "ev" left join ${fanOut.join}${sample ? ` and ${sampleAmong}` : ''} order by "ev"."id"`;
  });
