import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { announceKeyChange } from '../src/auth/keys.ts';
import { allScopes } from '../src/auth/scopes.ts';
import { ApiKey } from '../src/entities/index.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { connect, type TestSocket, until } from './ws-client.ts';

/**
 * Every transport asks src/auth/access.ts, and nothing else, what a key may reach: with the
 * module told to refuse chat:read to a key that holds it, REST, GraphQL over HTTP, a websocket
 * subscription, the websocket re-check of a changed key, the events list's filter and a webhook
 * subscription's types all refuse it, each in its own words. A transport that decided by itself
 * would still answer. (access.test.ts: the module's own answers, and no second reader in src.)
 */
const denied = vi.hoisted(() => new Set<string>());

vi.mock('../src/auth/access.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../src/auth/access.ts')>();
  const strip = (who: { scopes: ReadonlySet<string> }) => ({
    scopes: new Set([...who.scopes].filter((s) => !denied.has(s))),
  });
  // Each decision asked about the holder as the module is told to see it; a changed key's
  // re-check compares what it had with what it has now.
  return Object.fromEntries(
    Object.entries(real).map(([name, v]) => {
      if (typeof v !== 'function') return [name, v];
      if (name === 'narrowingRefusal')
        return [name, (before: any, now: any) => (v as any)(before, strip(now))];
      return [name, (who: any, ...rest: any[]) => (v as any)(strip(who), ...rest)];
    }),
  );
});

let app: TestApp;
let key: string;
const sockets: TestSocket[] = [];
const FORBIDDEN = 'This API key lacks the scope required here: chat:read.';

beforeAll(async () => {
  app = await startTestApp();
  ({ key } = await app.clinicWithKey(
    'dental',
    allScopes.filter((s) => s !== 'chat:write'),
  ));
});

afterAll(async () => {
  denied.clear();
  await Promise.all(sockets.map((s) => s.dispose()));
});

const open = () => {
  const s = connect(app.url, { Authorization: `Bearer ${key}` });
  sockets.push(s);
  return s;
};

/** What each transport answers the key for chat (and events of chat types) now. */
async function answers() {
  const rest = await app.get('/v1/chat/conversations', key);
  const gql = await app.gql('{ conversations(first: 1) { edges { node { id } } } }', undefined, key);
  const events = await app.get('/v1/events?type=chat.message.received', key);
  const webhook = await app.post(
    '/v1/webhooks',
    { url: 'http://127.0.0.1:9/hook', event_types: ['chat.message.sent'] },
    key,
  );
  const s = open();
  const sub = s.subscribe('subscription { conversationsChanged { id } }');
  await s.connected;
  await until(() => sub.errors.length > 0 || app.server.app.eventHub.size > 0);
  const subscribed = sub.errors.length ? sub.errors.map((e: any) => e.extensions?.code ?? e.message) : 'live';
  await s.dispose();
  return {
    rest: { status: rest.status, error: rest.body.error?.message },
    gql: { data: gql.body.data, errors: gql.body.errors?.map((e: any) => e.message) },
    events: { status: events.status, error: events.body.error?.message },
    webhook: { status: webhook.status, error: webhook.body.error?.message },
    subscribed,
  };
}

describe('access decides for every transport', () => {
  it('held: every transport answers', async () => {
    const a = await answers();
    expect(a.rest).toEqual({ status: 200, error: undefined });
    expect(a.gql).toEqual({ data: { conversations: { edges: [] } }, errors: undefined });
    expect(a.events).toEqual({ status: 200, error: undefined });
    expect(a.webhook.status).toBe(201);
    expect(a.subscribed).toBe('live');
    await until(() => app.server.app.eventHub.size === 0);
  });

  it('refused by the module: every transport refuses, naming chat:read', async () => {
    denied.add('chat:read');
    try {
      const a = await answers();
      expect(a.rest).toEqual({ status: 403, error: FORBIDDEN });
      expect(a.gql).toEqual({ data: { conversations: null }, errors: [FORBIDDEN] });
      expect(a.events).toEqual({ status: 403, error: FORBIDDEN });
      expect(a.webhook).toEqual({ status: 403, error: FORBIDDEN });
      expect(a.subscribed).toEqual(['forbidden']);
    } finally {
      denied.clear();
    }
  });

  it("an open socket's key re-checked: closed when the module says it lost chat:read", async () => {
    const s = open();
    s.subscribe('subscription { events { id } }');
    await s.connected;
    await until(() => app.server.app.eventHub.size === 1);
    const em = app.orm.em.fork();
    const row = await em.findOneOrFail(ApiKey, { prefix: key.slice(0, 14) });
    denied.add('chat:read');
    try {
      await announceKeyChange(em, row.hash);
      expect(await s.closed).toEqual({ code: 4403, reason: `forbidden: ${FORBIDDEN}` });
    } finally {
      denied.clear();
    }
  });
});

describe('node(id:) and its REST route', () => {
  it('name every scope the kind of id needs, in the same 403', async () => {
    const { key: other } = await app.clinicWithKey('veterinary', ['patients:read']);
    const rest = await app.get('/v1/catalog/vaccines/vac_999999', other);
    const gql = await app.gql('{ node(id: "vac_999999") { id } }', undefined, other);
    expect(rest.status).toBe(403);
    expect(rest.body.error.required_scopes).toEqual(['catalog:read', 'vaccines:read']);
    expect(gql.body.data).toEqual({ node: null });
    expect(gql.body.errors.map((e: any) => [e.message, e.extensions.required_scopes])).toEqual([
      [rest.body.error.message, rest.body.error.required_scopes],
    ]);
  });
});
