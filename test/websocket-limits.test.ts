import { type Client, createClient } from 'graphql-ws';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestApp, type TestApp } from './helpers.ts';
import { connect, type TestSocket, until } from './ws-client.ts';

/**
 * What one integrator may hold on graphql-ws (docs/limits.md, Websockets): sockets per key,
 * unacknowledged sockets per address, operations per socket, idle sockets, and the share of
 * maxConnections websockets may take. Each time, another key's HTTP request and websocket
 * still work.
 */
const EVENTS = 'subscription { events { id type } }';
const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
const sockets: { dispose(): Promise<void> | void }[] = [];
const track = <T extends { dispose(): Promise<void> | void }>(s: T): T => {
  sockets.push(s);
  return s;
};

afterEach(async () => {
  await Promise.all(sockets.splice(0).map((s) => s.dispose()));
});

/** A promise's value, or `fallback` after `ms`. */
const within = <T>(p: Promise<T>, ms: number, fallback: T): Promise<T> =>
  Promise.race([p, new Promise<T>((r) => setTimeout(() => r(fallback), ms))]);

/** A graphql-ws connection whose upgrade request names `address` in X-Forwarded-For. */
function connectFrom(url: string, address: string, params: Record<string, unknown>): TestSocket {
  class FromAddress extends WebSocket {
    constructor(u: string, protocols?: string | string[]) {
      super(u, protocols, { headers: { 'x-forwarded-for': address } });
    }
  }
  let onClosed!: (e: { code: number; reason: string }) => void;
  const closed = new Promise<{ code: number; reason: string }>((r) => {
    onClosed = r;
  });
  let onConnected!: () => void;
  const connected = new Promise<void>((r) => {
    onConnected = r;
  });
  const client: Client = createClient({
    url: `${url.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: FromAddress,
    lazy: false,
    retryAttempts: 0,
    connectionParams: params,
    on: { closed: (e: any) => onClosed({ code: e.code, reason: e.reason }), connected: () => onConnected() },
    onNonLazyError: () => {},
  });
  return track({
    client,
    closed,
    connected,
    subscribe: () => {
      throw new Error('not used');
    },
    dispose: async () => {
      await client.dispose();
    },
  });
}

/** A raw socket that upgrades from `address` and never sends connection_init. */
function silentFrom(url: string, address: string) {
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws', {
    headers: { 'x-forwarded-for': address },
  });
  ws.on('error', () => {});
  const opened = new Promise<void>((r) => ws.once('open', () => r()));
  const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
  return track({ ws, opened, closed, dispose: () => ws.terminate() });
}

describe('caps of one key and one address', () => {
  let app: TestApp;
  let greedy: string;
  let other: string;
  let otherEvents: string;
  beforeAll(async () => {
    app = await startTestApp({
      trustProxy: 'loopback',
      limits: {
        maxConnections: 100,
        wsMaxPerKey: 3,
        wsMaxUnauthenticatedPerAddress: 2,
        wsMaxOperationsPerSocket: 4,
      },
    });
    greedy = (await app.clinicWithKey('dental', ['webhooks:manage'], 'greedy')).key;
    const c = await app.clinicWithKey('dental', ['patients:read'], 'other');
    other = c.key;
    otherEvents = await app.key(c.clinicId, ['webhooks:manage']);
  });
  const open = (params: Record<string, unknown>) => track(connect(app.url, params));
  // The next test starts with no socket held, the server's side included.
  afterEach(async () => {
    await Promise.all(sockets.splice(0).map((s) => s.dispose()));
    await until(() => app.server.subscriptions.size === 0);
  });

  it('closes a key’s socket past its cap with 4429; other keys still connect and are served', async () => {
    // One at a time: all come from one address, whose unacknowledged sockets are capped at 2.
    const held: TestSocket[] = [];
    for (let i = 0; i < 3; i++) {
      held.push(open(bearer(greedy)));
      await held[i].connected;
    }
    const extra = open(bearer(greedy));
    expect(await within(extra.closed, 3000, { code: 0, reason: 'still open' })).toEqual({
      code: 4429,
      reason: 'Too many connections',
    });
    // The key's own sockets stay, another key connects and subscribes, and HTTP answers.
    const theirs = open(bearer(otherEvents));
    await theirs.connected;
    const sub = theirs.subscribe(EVENTS);
    expect((await app.get('/v1/patients', other)).status).toBe(200);
    await until(() => app.server.subscriptions.size === 4);
    expect(sub.errors).toEqual([]);
    // A place freed is a place again.
    await held[0].dispose();
    await until(() => app.server.subscriptions.size === 3);
    await open(bearer(greedy)).connected;
  });

  it('refuses an operation past the socket’s cap with rate_limited and keeps the socket', async () => {
    const s = open(bearer(greedy));
    await s.connected;
    const subs = [0, 1, 2, 3].map(() => s.subscribe(EVENTS));
    const over = s.subscribe(EVENTS);
    await until(() => over.errors.length > 0);
    expect(over.errors[0].extensions).toMatchObject({
      code: 'rate_limited',
      limit: 'operations_per_socket',
      max: 4,
    });
    expect(subs.every((x) => x.errors.length === 0 && !x.completed)).toBe(true);
    // Still open: once one operation ends, another starts.
    await until(() => app.server.app.eventHub.size === 4);
    subs[0].stop();
    await until(() => app.server.app.eventHub.size === 3);
    const again = s.subscribe(EVENTS);
    // Subscribed for real (in the event hub), not merely not refused yet.
    await until(() => app.server.app.eventHub.size === 4);
    expect(again.errors).toEqual([]);
    expect(await within(s.closed, 50, null)).toBeNull();
  });

  it('closes unacknowledged sockets of one address past its cap with 4429, not other addresses', async () => {
    const pending = [silentFrom(app.url, '203.0.113.5'), silentFrom(app.url, '203.0.113.5')];
    await Promise.all(pending.map((p) => p.opened));
    const over = silentFrom(app.url, '203.0.113.5');
    expect(await within(over.closed, 2000, 0)).toBe(4429);
    // Another address connects with its key; HTTP is served.
    const elsewhere = connectFrom(app.url, '198.51.100.7', bearer(otherEvents));
    await elsewhere.connected;
    expect((await app.get('/v1/patients', other)).status).toBe(200);
    // An acknowledged socket no longer counts against its address.
    for (const p of pending) p.ws.terminate();
    await Promise.all(pending.map((p) => p.closed));
    // One at a time: a handshake under way is unacknowledged too.
    for (let i = 0; i < 3; i++) await connectFrom(app.url, '203.0.113.5', bearer(greedy)).connected;
    await silentFrom(app.url, '203.0.113.5').opened;
  });
});

describe('idle sockets and the websockets’ share of connections', () => {
  let app: TestApp;
  let keys: string[];
  let other: string;
  beforeAll(async () => {
    // 12 connections, websockets at most half of them: 6.
    app = await startTestApp({
      limits: { maxConnections: 12, wsConnectionsPercent: 50, wsMaxPerKey: 3, wsIdleTimeoutMs: 1200 },
    });
    keys = [];
    for (const name of ['a', 'b'])
      keys.push((await app.clinicWithKey('dental', ['webhooks:manage'], name)).key);
    other = (await app.clinicWithKey('dental', ['patients:read'], 'other')).key;
  });
  const open = (params: Record<string, unknown>) => track(connect(app.url, params));
  // The next test starts with no socket held, the server's side included.
  afterEach(async () => {
    await Promise.all(sockets.splice(0).map((s) => s.dispose()));
    await until(() => app.server.subscriptions.size === 0);
  });

  it('closes websockets past the share with 1013 and keeps connections for HTTP', async () => {
    const held = keys.flatMap((k) => [0, 1, 2].map(() => open(bearer(k))));
    await Promise.all(held.map((s) => s.connected));
    const over = open(bearer(other));
    expect((await within(over.closed, 3000, { code: 0, reason: '' })).code).toBe(1013);
    const answers = await Promise.all(
      [0, 1, 2].map(() => app.get('/v1/patients', other).then((r) => r.status)),
    );
    expect(answers).toEqual([200, 200, 200]);
  });

  it('closes an acknowledged socket with no operation after the idle time (1000), not one subscribed', async () => {
    const idle = open(bearer(keys[0]));
    const busy = open(bearer(keys[1]));
    await Promise.all([idle.connected, busy.connected]);
    const sub = busy.subscribe(EVENTS);
    const started = performance.now();
    const { code } = await within(idle.closed, 4000, { code: 0, reason: '' });
    expect(code).toBe(1000);
    expect(performance.now() - started).toBeGreaterThan(1000);
    expect(await within(busy.closed, 500, null)).toBeNull();
    expect(sub.errors).toEqual([]);
    // Once its last subscription ends, it is idle too.
    sub.stop();
    expect((await within(busy.closed, 4000, { code: 0, reason: '' })).code).toBe(1000);
  });
});
