import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { type Client, type ClientOptions, createClient, type SubscribePayload } from 'graphql-ws';
import {
  ClinicEventsDocument,
  type ClinicEventsSubscription,
  type ClinicEventsSubscriptionVariables,
} from './generated/graphql.js';
import { type GraphQLErrorEntry, GraphQLRequestError, queryOf, type VariablesArgument } from './graphql.js';

/** One event of the `events` subscription: the webhook envelope's id, type, time and data. */
export type ClinicEvent = ClinicEventsSubscription['events'];

/**
 * Close codes that mean the key was refused: 4403 (missing, unknown, revoked or short of a
 * scope: docs/events.md) and 4401. The same key is refused again, so they end the client's
 * subscriptions instead of being retried; a new key needs a new client.
 */
export const REFUSED_CLOSE_CODES: readonly number[] = [4401, 4403];

/**
 * graphql-ws's `shouldRetry`: reconnect after anything but a refused key (graphql-ws throws its
 * fatal close codes before asking). Its default differs both ways: it retries a 4403 five times
 * over about half a minute, against its documentation's advice, and it gives up on a connection
 * that fails with an error event before the close, which is how Node's and browsers' own
 * WebSocket report an unclean close.
 */
export function shouldRetry(errOrCloseEvent: unknown): boolean {
  const close = closeOf(errOrCloseEvent);
  return close === null || !REFUSED_CLOSE_CODES.includes(close.code);
}

function closeOf(value: unknown): { code: number; reason: string } | null {
  if (typeof value !== 'object' || value === null || !('code' in value) || !('reason' in value)) return null;
  const { code, reason } = value;
  return typeof code === 'number' ? { code, reason: String(reason) } : null;
}

/** The socket closed for good: the key was refused (4403), or the retries ran out. */
export class SubscriptionClosedError extends Error {
  readonly code: number;
  readonly reason: string;
  constructor(code: number, reason: string) {
    super(reason ? `${code}: ${reason}` : `The subscription's socket closed (${code}).`);
    this.name = 'SubscriptionClosedError';
    this.code = code;
    this.reason = reason;
  }
}

export interface SubscriptionClientOptions
  extends Omit<ClientOptions, 'url' | 'connectionParams' | 'shouldRetry'> {
  /** The /graphql endpoint, http(s):// or ws(s)://; http is turned into ws. */
  url: string;
  /** An API key of the clinic, sent in connection_init. */
  apiKey: string;
  /**
   * A WebSocket class where there is no global one: Node 20 (`import WebSocket from 'ws'`).
   * Node 22 and later, and browsers, have their own.
   */
  webSocketImpl?: unknown;
}

/** A graphql-ws client that stops at a refused key, with typed subscriptions and resumable events. */
export interface SubscriptionClient extends Client {
  /** A subscription's results, typed by its document; an error ends it (GraphQLRequestError). */
  subscription<R, V>(
    document: TypedDocumentNode<R, V>,
    ...[variables]: VariablesArgument<V>
  ): AsyncGenerator<R, void, undefined>;
  /**
   * The clinic's events as they are committed. After a dropped socket the client reconnects
   * and subscribes again with `after` the last event it received: what was committed meanwhile
   * is replayed first, with no gap and no duplicate. `after` here starts the same way.
   */
  events(options?: ClinicEventsSubscriptionVariables): AsyncGenerator<ClinicEvent, void, undefined>;
}

/**
 * One graphql-ws connection (opened on the first subscription) for the service's subscriptions.
 * A dropped socket is reconnected with graphql-ws's backoff (`retryAttempts`, `retryWait`); a
 * refused key (4401, 4403) ends every subscription at once with a SubscriptionClosedError.
 */
export function createSubscriptionClient(options: SubscriptionClientOptions): SubscriptionClient {
  const { url, apiKey, ...rest } = options;
  const client = createClient({
    ...rest,
    url: url.replace(/^http/, 'ws'),
    connectionParams: { Authorization: `Bearer ${apiKey}` },
    shouldRetry,
  });
  return Object.assign(client, {
    subscription<R, V>(document: TypedDocumentNode<R, V>, ...[variables]: VariablesArgument<V>) {
      return results<R>(client, { query: queryOf(document), variables: variables ?? {} });
    },
    async *events(opts: ClinicEventsSubscriptionVariables = {}) {
      const variables = { types: opts.types ?? null, after: opts.after ?? null };
      // graphql-ws sends this same payload object again on each reconnection (its client's
      // subscribe loop), so moving `after` to each event as it arrives makes the new
      // subscription replay from the last one received. Set on arrival, not when the caller
      // takes it: events already received are queued below and must not come twice.
      const payload = { query: queryOf(ClinicEventsDocument), variables };
      for await (const data of results<ClinicEventsSubscription>(client, payload, (d) => {
        variables.after = d.events.id;
      }))
        yield data.events;
    },
  });
}

/**
 * A subscription's data as an async generator, through graphql-ws's `subscribe`: its `iterate`
 * cannot say when a result arrives, which the events' cursor needs. Leaving the loop (a break, an
 * error) completes the subscription on the server.
 */
async function* results<R>(
  client: Client,
  payload: SubscribePayload,
  received?: (data: R) => void,
): AsyncGenerator<R, void, undefined> {
  const pending: R[] = [];
  const state: { ended: boolean; error?: unknown; wake?: () => void } = { ended: false };
  const end = (error?: unknown) => {
    if (state.ended) return;
    state.ended = true;
    if (error !== undefined) state.error = error;
    state.wake?.();
  };
  const dispose = client.subscribe<R>(payload, {
    next(result) {
      if (result.errors?.length) return end(new GraphQLRequestError(result.errors, 200));
      if (result.data == null) return;
      received?.(result.data);
      pending.push(result.data);
      state.wake?.();
    },
    error(err) {
      const close = closeOf(err);
      if (close) return end(new SubscriptionClosedError(close.code, close.reason));
      // graphql-ws hands a refused operation's errors as an array.
      end(Array.isArray(err) ? new GraphQLRequestError(err as GraphQLErrorEntry[], 200) : err);
    },
    complete: () => end(),
  });
  try {
    for (;;) {
      while (pending.length > 0) yield pending.shift() as R;
      if (state.ended) {
        if ('error' in state) throw state.error;
        return;
      }
      await new Promise<void>((resolve) => {
        state.wake = resolve;
      });
    }
  } finally {
    dispose();
  }
}
