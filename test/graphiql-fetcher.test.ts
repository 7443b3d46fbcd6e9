import { readFileSync } from 'node:fs';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';

/**
 * The console's fetcher (src/server/graphiql-fetcher.js), run outside a browser with fakes for
 * `fetch` and graphql-ws: which operations go over the websocket (the subscription GraphiQL is
 * asked to run, read from the document's text), what connection_init carries, and what the
 * response pane gets when there is no key or the socket is refused. test/browser.test.ts runs it
 * in Chromium against the server.
 */
const source = readFileSync(new URL('../src/server/graphiql-fetcher.js', import.meta.url), 'utf8');

interface Sink {
  next(value: unknown): void;
  error(e: unknown): void;
  complete(): void;
}

function load() {
  const posted: { url: string; init: any }[] = [];
  const clients: { options: any; sink?: Sink; disposed: boolean }[] = [];
  const sandbox: Record<string, any> = {
    URL,
    location: { href: 'http://127.0.0.1:4000/graphql' },
    fetch: async (url: string, init: any) => {
      posted.push({ url, init });
      return new Response('{"data":{}}');
    },
    graphqlWs: {
      createClient(options: any) {
        const client = { options, sink: undefined as Sink | undefined, disposed: false };
        clients.push(client);
        return {
          subscribe(_payload: unknown, sink: Sink) {
            client.sink = sink;
            return () => {};
          },
          dispose() {
            client.disposed = true;
          },
        };
      },
    },
  };
  runInNewContext(source, sandbox);
  const fetcher = sandbox.graphiqlFetcher('/graphql');
  const key = { Authorization: 'Bearer cg_test_k' };
  /** Where `query` goes: 'ws' or 'http'. */
  const route = async (query: string, operationName?: string) => {
    const before = { ws: clients.length, http: posted.length };
    const result = fetcher({ query, operationName }, { headers: key });
    if (typeof result.subscribe === 'function') result.subscribe({ next() {}, error() {}, complete() {} });
    else await result;
    if (clients.length > before.ws) return 'ws';
    if (posted.length > before.http) return 'http';
    return 'none';
  };
  return { fetcher, posted, clients, route };
}

describe('the console fetcher', () => {
  it('sends subscriptions over graphql-ws and everything else over HTTP, reading the text sent', async () => {
    const { route } = load();
    expect(await route('subscription { events { id } }')).toBe('ws');
    expect(await route('subscription{events{id}}')).toBe('ws');
    expect(await route('{ patients { totalCount } }')).toBe('http');
    expect(await route('query IntrospectionQuery { __schema { types { name } } }')).toBe('http');
    expect(await route('mutation { createPatient(input: {firstName: "A"}) { patient { id } } }')).toBe(
      'http',
    );
    // Comments and strings are not read as definitions or braces.
    const sub = 'subscription A { events { id } }';
    expect(await route(`# query A { patients { totalCount } }\n${sub}`, 'A')).toBe('ws');
    expect(await route(`query Q($a: String = "{") { patients(q: $a) { totalCount } }\n${sub}`, 'A')).toBe(
      'ws',
    );
    // Several operations: the one GraphiQL names.
    const two = 'query A { patients { totalCount } }\nsubscription B { events { id } }';
    expect(await route(two, 'B')).toBe('ws');
    expect(await route(two, 'A')).toBe('http');
    // Fragments, variables with object defaults and directive arguments do not end a definition.
    expect(
      await route('fragment F on Event { id }\nsubscription S($t: In = {a: 1}) @d(x: 1) { events { ...F } }'),
    ).toBe('ws');
    expect(await route('query Q @d(x: 1) { a }\nsubscription { events { id } }', 'Q')).toBe('http');
  });

  it("puts the editor's Authorization in connection_init, and POSTs the editor's headers", async () => {
    const { fetcher, posted, clients } = load();
    fetcher(
      { query: 'subscription { events { id } }' },
      { headers: { authorization: 'Bearer cg_test_k', 'x-other': '1' } },
    ).subscribe({ next() {}, error() {}, complete() {} });
    expect(clients[0].options).toMatchObject({
      url: 'ws://127.0.0.1:4000/graphql',
      connectionParams: { Authorization: 'Bearer cg_test_k' },
      retryAttempts: 0,
    });
    await fetcher({ query: '{ a }' }, { headers: { Authorization: 'Bearer cg_test_k' } });
    expect(posted[0].url).toBe('http://127.0.0.1:4000/graphql');
    expect(posted[0].init.headers).toMatchObject({ Authorization: 'Bearer cg_test_k' });
    expect(JSON.parse(posted[0].init.body)).toEqual({ query: '{ a }' });
  });

  it('answers a subscription without a key at once, and a refused socket with what happened', async () => {
    const { fetcher, clients } = load();
    const noKey = await fetcher({ query: 'subscription { events { id } }' }, { headers: {} });
    expect(noKey.errors[0]).toMatchObject({
      message: expect.stringContaining('Subscriptions need your API key'),
      extensions: { code: 'unauthenticated' },
    });
    expect(clients).toHaveLength(0);

    const seen: unknown[] = [];
    let completed = false;
    fetcher(
      { query: 'subscription { events { id } }' },
      { headers: { Authorization: 'Bearer x' } },
    ).subscribe({
      next: (v: unknown) => seen.push(v),
      error: () => {},
      complete: () => {
        completed = true;
      },
    });
    clients[0].sink?.error({ code: 4403, reason: 'Forbidden' });
    expect(seen).toEqual([
      {
        errors: [
          {
            message: expect.stringContaining('refused the API key in Headers (close 4403 Forbidden)'),
            extensions: { code: 'unauthenticated' },
          },
        ],
      },
    ]);
    expect(completed).toBe(true);
    expect(clients[0].disposed).toBe(true);
  });

  it("shows the server's close reason, REST's code and message, when it gives one", async () => {
    const { fetcher, clients } = load();
    const seen: any[] = [];
    for (const reason of [
      'unauthenticated: Invalid or revoked API key.',
      'rate_limited: Too many failed authentications from this address. Retry after 60 s.',
    ]) {
      fetcher(
        { query: 'subscription { events { id } }' },
        { headers: { Authorization: 'Bearer x' } },
      ).subscribe({ next: (v: unknown) => seen.push(v), error: () => {}, complete: () => {} });
      clients[clients.length - 1].sink?.error({ code: 4403, reason });
    }
    expect(seen.map((v) => v.errors[0])).toEqual([
      {
        message:
          'The server refused the API key in Headers: Invalid or revoked API key. (close 4403, unauthenticated)',
        extensions: { code: 'unauthenticated' },
      },
      {
        message:
          'The server refused the API key in Headers: Too many failed authentications from this address. Retry after 60 s. (close 4403, rate_limited)',
        extensions: { code: 'rate_limited' },
      },
    ]);
  });
});
