import { hiddenEventScopes } from '../../auth/access.ts';
import { readAfterId } from '../../db/list.ts';
import { Event } from '../../entities/index.ts';
import { type AsyncQueue, asyncQueue } from '../../lib/async-queue.ts';
import { readAsOneResult } from '../../lib/budget.ts';
import { AppError, invalid } from '../../lib/errors.ts';
import { tryParseId } from '../../lib/ids.ts';
import { readsOf, type ServiceContext } from '../../lib/request-context.ts';
import type { Row } from '../resource.ts';
import { type EventRow, envelopeOf } from './envelope.ts';
import { eventTypesParam } from './events.ts';
import type { EventHub, LiveEvent } from './hub.ts';

declare module '../../lib/request-context.ts' {
  interface AppServices {
    /** This process's fan-out of committed events (src/services/events/relay.ts feeds it). */
    events: { hub: EventHub };
  }
}

/** One envelope per event however many subscribers it goes to (they only read it). */
const envelopes = new WeakMap<LiveEvent, Row>();
const envelopeOnce = (e: LiveEvent): Row => {
  let envelope = envelopes.get(e);
  if (!envelope) {
    envelope = envelopeOf(e);
    envelopes.set(e, envelope);
  }
  return envelope;
};

/** Rows per replay read (`after:`), oldest first. */
const REPLAY_PAGE = 100;

/**
 * Most values a subscription holds for its client before the client reads them (docs/limits.md,
 * Websockets): a client that stops reading is ended with an error rather than have the server
 * keep every event of its clinic for it. A replay reads its next page only once the client has
 * read most of the last one, so even a replay of the whole outbox holds at most this many.
 */
export const MAX_UNREAD = 1000;

const tooFarBehind = () =>
  new AppError(
    'response_too_large',
    `This subscription fell more than ${MAX_UNREAD} events behind its client and was ended; subscribe again with after: the last event id received.`,
  );

const bounded = { maxBuffered: MAX_UNREAD, overflow: tooFarBehind };

export interface LiveEventArgs {
  types?: unknown;
  /** An event id (`evt_<n>`): replay the events after it from the outbox before going live. */
  after?: unknown;
}

function afterParam(raw: unknown): number | undefined {
  if (raw === undefined || raw === null) return undefined;
  const n = typeof raw === 'string' ? tryParseId('Event', raw) : null;
  if (n == null) throw invalid('after', `after must be an event id such as evt_42; got '${String(raw)}'.`);
  return n;
}

/**
 * The `events` subscription: every envelope of the key's clinic, exactly as a webhook delivery
 * carries it (`envelopeOf`, the presenter of GET /v1/events/{id}), filtered by `types` and by the
 * key's scopes the way GET /v1/events filters (chat.* only with chat:read; a chat type asked for
 * without it is a 403, an unknown type a 422, both before anything is subscribed).
 *
 * Strictly ascending by id, so the last id a client saw is a complete cursor. With `after`, the
 * events after it are replayed from the outbox up to the hub's watermark (everything at or below
 * it has settled, and was published before this subscribed), then the live ones, all above it,
 * buffered during the replay. An id at or below the last one yielded is never yielded again
 * (a client resuming from another instance whose relay was ahead).
 */
export function liveEvents(ctx: ServiceContext, hub: EventHub, args: LiveEventArgs): AsyncQueue<Row> {
  const types = eventTypesParam(ctx, args.types, 'types');
  const after = afterParam(args.after);
  const hidden = hiddenEventScopes(ctx.principal);
  const wanted = (e: { type: string; scope: string }) =>
    (!types || (types as string[]).includes(e.type)) && !hidden.includes(e.scope);
  let buffer: LiveEvent[] | null = after === undefined ? null : [];
  let last = after ?? 0;
  const queue = asyncQueue<Row>(() => unsubscribe(), bounded);
  // Read in the same tick as the subscription below: nothing is published in between.
  const upTo = hub.watermark;
  const unsubscribe = hub.subscribe(
    ctx.principal.clinicId,
    (e) => {
      if (!wanted(e)) return;
      if (buffer) {
        if (buffer.length >= MAX_UNREAD) queue.fail(tooFarBehind());
        else buffer.push(e);
      } else if (e.id > last) {
        last = e.id;
        queue.push(envelopeOnce(e));
      }
    },
    { fromNow: after === undefined },
  );
  if (after !== undefined) {
    replay(
      ctx,
      after,
      upTo,
      wanted,
      (e) => {
        last = e.id;
        queue.push(envelopeOf(e));
      },
      queue,
    )
      .then(() => {
        const live = buffer ?? [];
        buffer = null;
        for (const e of live) {
          if (e.id <= last) continue;
          last = e.id;
          queue.push(envelopeOnce(e));
        }
      })
      .catch((e) => queue.fail(e));
  }
  return queue;
}

/** What a replayed event is read with: its envelope's columns and its scope. */
const replayRead = Object.freeze({
  fields: Object.freeze(['type', 'scope', 'createdAt', 'data']),
  joins: Object.freeze({}),
});

type ReplayedRow = EventRow & { scope: string };

/**
 * The clinic's events in (after, upTo], ascending, a page at a time, through the list mechanism
 * (the clinic's read handle, each page against the response cap on its own). Samples never: the
 * relay does not stream them either.
 */
async function replay(
  ctx: ServiceContext,
  after: number,
  upTo: number,
  wanted: (e: { type: string; scope: string }) => boolean,
  emit: (e: ReplayedRow) => void,
  queue: AsyncQueue<Row>,
): Promise<void> {
  const where = [{ test: false }, { id: { $lte: upTo } }];
  let cursor = after;
  while (cursor < upTo) {
    // The client's pace: the next page once most of the last one was read.
    await queue.below(REPLAY_PAGE);
    if (queue.closed) return;
    const rows = (await readAsOneResult(() =>
      readAfterId(readsOf(ctx), Event, replayRead, where, cursor, REPLAY_PAGE),
    )) as ReplayedRow[];
    for (const row of rows) if (wanted(row)) emit(row);
    if (rows.length < REPLAY_PAGE || queue.closed) return;
    cursor = rows[rows.length - 1].id;
  }
}

/** The chat events a live inbox follows: every message change, inbound and outbound. */
export const isMessageEvent = (e: LiveEvent) => e.type.startsWith('chat.message.');

/**
 * A live feed of this clinic's events that pass `filter`, each mapped by `map` (which may read),
 * in ascending id order, the order the relay publishes them (one mapping at a time).
 */
export function liveMapped<T>(
  ctx: ServiceContext,
  hub: EventHub,
  filter: (e: LiveEvent) => boolean,
  map: (e: LiveEvent) => T | Promise<T>,
): AsyncQueue<T> {
  let chain: Promise<void> = Promise.resolve();
  const queue = asyncQueue<T>(() => unsubscribe(), bounded);
  const unsubscribe = hub.subscribe(
    ctx.principal.clinicId,
    (e) => {
      if (!filter(e)) return;
      chain = chain
        .then(async () => {
          if (!queue.closed) queue.push(await map(e));
        })
        .catch((err) => queue.fail(err));
    },
    { fromNow: true },
  );
  return queue;
}
