import { type Client, createClient } from 'graphql-ws';
import WebSocket from 'ws';

/** One graphql-ws connection of a test, and what each of its subscriptions received. */
export interface TestSocket {
  client: Client;
  /** The close event's code once the socket closed (4403: refused or revoked). */
  closed: Promise<{ code: number; reason: string }>;
  /** Resolves once the server acknowledged connection_init. */
  connected: Promise<void>;
  subscribe(query: string, variables?: Record<string, unknown>): TestSubscription;
  dispose(): Promise<void>;
}

export interface TestSubscription {
  results: any[];
  errors: any[];
  completed: boolean;
  /** Resolves once `n` results arrived (rejects after `ms`). */
  waitFor(n: number, ms?: number): Promise<any[]>;
  stop(): void;
}

/** Connects to ws://…/graphql with a connection_init payload (`{Authorization}` or `{apiKey}`). */
export function connect(httpUrl: string, params: Record<string, unknown> | null): TestSocket {
  let onClosed!: (e: { code: number; reason: string }) => void;
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    onClosed = resolve;
  });
  let onConnected!: () => void;
  const connected = new Promise<void>((resolve) => {
    onConnected = resolve;
  });
  const client = createClient({
    url: `${httpUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    lazy: false,
    retryAttempts: 0,
    connectionParams: params ?? undefined,
    on: { closed: (e: any) => onClosed({ code: e.code, reason: e.reason }), connected: () => onConnected() },
    onNonLazyError: () => {},
  });
  return {
    client,
    closed,
    connected,
    subscribe(query, variables) {
      const sub: TestSubscription & { waiters: (() => void)[] } = {
        results: [],
        errors: [],
        completed: false,
        waiters: [],
        waitFor(n, ms = 5000) {
          return new Promise((resolve, reject) => {
            const check = () => {
              if (sub.results.length >= n) {
                resolve(sub.results);
                return true;
              }
              return false;
            };
            if (check()) return;
            const timer = setTimeout(
              () =>
                reject(
                  new Error(
                    `waited for ${n} results, got ${sub.results.length}: ${JSON.stringify({ results: sub.results, errors: sub.errors })}`,
                  ),
                ),
              ms,
            );
            sub.waiters.push(() => {
              if (check()) clearTimeout(timer);
            });
          });
        },
        stop: () => {},
      };
      const notify = () => {
        for (const w of sub.waiters) w();
      };
      sub.stop = client.subscribe(
        { query, variables },
        {
          next: (r) => {
            if (r.errors) sub.errors.push(...r.errors);
            else sub.results.push(r.data);
            notify();
          },
          error: (e) => {
            // graphql-ws's `error` message carries the list of errors; a closed socket, an event.
            if (Array.isArray(e)) sub.errors.push(...e);
            else sub.errors.push(e);
            notify();
          },
          complete: () => {
            sub.completed = true;
            notify();
          },
        },
      );
      return sub;
    },
    dispose: async () => {
      await client.dispose();
    },
  };
}

/** Waits until `check` holds (polling), or fails after `ms`. */
export async function until(check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
