import { Event } from '../../entities/index.ts';
import { type AsyncQueue, asyncQueue } from '../../lib/async-queue.ts';
import { invalid } from '../../lib/errors.ts';
import { tryParseId } from '../../lib/ids.ts';
import { readsOf, type ServiceContext } from '../../lib/request-context.ts';
import { envelopeOf } from '../../webhooks/signing.ts';
import type { Row } from '../resource.ts';
import { eventTypesParam, hiddenScopes } from './events.ts';
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
 * With `after`, the events after that id are replayed from the outbox first, ascending, then the
 * live ones follow with no gap and no duplicate: the live feed is subscribed to before the
 * outbox is read and buffered meanwhile, and what the replay yielded is skipped when the buffer
 * drains (an event committed during the read is in both).
 */
export function liveEvents(ctx: ServiceContext, hub: EventHub, args: LiveEventArgs): AsyncQueue<Row> {
  const types = eventTypesParam(ctx, args.types, 'types');
  const after = afterParam(args.after);
  const hidden = hiddenScopes(ctx);
  const wanted = (e: { type: string; scope: string }) =>
    (!types || (types as string[]).includes(e.type)) && !hidden.includes(e.scope);
  let buffer: LiveEvent[] | null = after === undefined ? null : [];
  const replayed = new Set<number>();
  const queue = asyncQueue<Row>(() => unsubscribe());
  const unsubscribe = hub.subscribe(ctx.principal.clinicId, (e) => {
    if (!wanted(e)) return;
    if (buffer) buffer.push(e);
    else if (!replayed.has(e.id)) queue.push(envelopeOnce(e));
  });
  if (after !== undefined) {
    replay(
      ctx,
      after,
      wanted,
      (e) => {
        replayed.add(e.id);
        queue.push(envelopeOf(e));
      },
      () => queue.closed,
    )
      .then(() => {
        const live = buffer ?? [];
        buffer = null;
        for (const e of live) if (!replayed.has(e.id)) queue.push(envelopeOnce(e));
      })
      .catch((e) => queue.fail(e));
  }
  return queue;
}

/** The clinic's events after `after`, ascending, a page at a time, until the outbox is exhausted. */
async function replay(
  ctx: ServiceContext,
  after: number,
  wanted: (e: { type: string; scope: string }) => boolean,
  emit: (e: Event) => void,
  stopped: () => boolean,
): Promise<void> {
  let cursor = after;
  for (;;) {
    // A fork per page: a long replay never fills the shared read handle's identity map.
    const em = readsOf(ctx).fork({ clear: true });
    const rows = await em.find(
      Event,
      { clinic: ctx.principal.clinicId, id: { $gt: cursor } },
      { orderBy: { id: 'asc' }, limit: REPLAY_PAGE },
    );
    for (const row of rows) if (wanted(row)) emit(row);
    if (rows.length < REPLAY_PAGE || stopped()) return;
    cursor = rows[rows.length - 1].id;
  }
}

/** The chat events a live inbox follows: every message change, inbound and outbound. */
export const isMessageEvent = (e: LiveEvent) => e.type.startsWith('chat.message.');

/**
 * A live feed of this clinic's events that pass `filter`, each mapped by `map` (which may read),
 * in the order they were committed (one mapping at a time).
 */
export function liveMapped<T>(
  ctx: ServiceContext,
  hub: EventHub,
  filter: (e: LiveEvent) => boolean,
  map: (e: LiveEvent) => T | Promise<T>,
): AsyncQueue<T> {
  let chain: Promise<void> = Promise.resolve();
  const queue = asyncQueue<T>(() => unsubscribe());
  const unsubscribe = hub.subscribe(ctx.principal.clinicId, (e) => {
    if (!filter(e)) return;
    chain = chain
      .then(async () => {
        if (!queue.closed) queue.push(await map(e));
      })
      .catch((err) => queue.fail(err));
  });
  return queue;
}
