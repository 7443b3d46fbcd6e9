import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { type Receiver, startReceiver } from './webhook-receiver.ts';

/**
 * Issue 34: one visibility rule for every webhook operation, and a replay that answers nothing the
 * key may not see now. A key sees a subscription only if it may see every type the subscription
 * receives (`seesSubscription`, src/services/webhooks/webhooks.ts); otherwise the subscription is
 * out of its sight on every route, REST and GraphQL: not listed, a 404 by id, nothing changed,
 * queued or sampled. Real servers, real receivers on loopback.
 */
let app: TestApp;
const receivers: Receiver[] = [];

beforeAll(async () => {
  app = await startTestApp();
  app.clock.set('2031-06-01T09:00:00Z');
});
afterAll(async () => {
  for (const r of receivers) await r.close();
});

async function receiver() {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

const WHOLE_SECRET = /whsec_[A-Za-z0-9+/]{43}=/;

/** A clinic with a key lacking chat:read (`plain`) and one holding it (`chat`). */
async function clinic() {
  const { clinicId, key: chat } = await app.clinicWithKey('dental', [
    'webhooks:manage',
    'chat:read',
    'patients:write',
  ]);
  const plain = await app.key(clinicId, ['webhooks:manage']);
  return { clinicId, chat, plain };
}

describe("the issue's sequence: a replay never reveals a secret the replaying key may not see", () => {
  it('REST: widened to chat.* and re-keyed by a chat key, the first key’s replay of its creation is a 404 without the secret', async () => {
    const { chat, plain } = await clinic();
    const r = await receiver();
    const idem = { 'idempotency-key': 'create-issue-34' };
    const body = { url: r.url, event_types: ['patient.created'] };
    const created = await app.post('/v1/webhooks', body, plain, idem);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const { id, secret: s0 } = created.body.data;
    expect(s0).toMatch(WHOLE_SECRET);
    // A replay while nothing changed answers the creation again, its secret whole (Stripe's rule).
    const same = await app.post('/v1/webhooks', body, plain, idem);
    expect([same.status, same.headers.get('idempotent-replayed')]).toEqual([201, 'true']);
    expect(same.body.data.secret).toBe(s0);

    const widened = await app.send(
      'PATCH',
      `/v1/webhooks/${id}`,
      { event_types: ['patient.created', 'chat.message.received'] },
      chat,
    );
    expect(widened.status, JSON.stringify(widened.body)).toBe(200);
    const rotated = await app.post(`/v1/webhooks/${id}/rotate-secret`, {}, chat);
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    const s1 = rotated.body.data.secret as string;

    const replay = await app.post('/v1/webhooks', body, plain, idem);
    expect([replay.status, replay.body.error?.code], JSON.stringify(replay.body)).toEqual([404, 'not_found']);
    expect(replay.headers.get('idempotent-replayed')).toBeNull();
    expect(JSON.stringify(replay.body)).not.toContain(s1);
    expect(JSON.stringify(replay.body)).not.toMatch(WHOLE_SECRET);
    // The chat key still sees it, with the secret it made.
    expect((await app.get(`/v1/webhooks/${id}`, chat)).body.data.secret).toBe(
      `whsec_****${s1.slice(-5, -1)}`,
    );
  });

  it('REST: re-keyed only (still visible), the replay shows its own secret masked, never the newer one', async () => {
    const { chat, plain } = await clinic();
    const r = await receiver();
    const idem = { 'idempotency-key': 'create-rotated' };
    const body = { url: r.url, event_types: ['patient.created'] };
    const created = await app.post('/v1/webhooks', body, plain, idem);
    const { id, secret: s0 } = created.body.data;
    const s1 = (await app.post(`/v1/webhooks/${id}/rotate-secret`, {}, chat)).body.data.secret as string;
    expect(s1).toMatch(WHOLE_SECRET);
    const replay = await app.post('/v1/webhooks', body, plain, idem);
    expect([replay.status, replay.headers.get('idempotent-replayed')]).toEqual([201, 'true']);
    expect(replay.body.data).toEqual({ ...created.body.data, secret: `whsec_****${s0.slice(-5, -1)}` });
    expect(JSON.stringify(replay.body)).not.toMatch(WHOLE_SECRET);
  });

  it('GraphQL: the createWebhook replay is not_found once widened and re-keyed, and masked once re-keyed', async () => {
    const { chat, plain } = await clinic();
    const r = await receiver();
    const create = (idempotencyKey: string) =>
      app.gql(
        'mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { webhookSubscription { id secret eventTypes } } }',
        { input: { idempotencyKey, url: r.url, eventTypes: ['PATIENT_CREATED'] } },
        plain,
      );
    const rotate = async (id: string) => {
      const res = await app.gql(
        'mutation($input: RotateWebhookSecretInput!) { rotateWebhookSecret(input: $input) { webhookSubscription { secret } } }',
        { input: { id } },
        chat,
      );
      expect(res.body.errors, JSON.stringify(res.body)).toBeUndefined();
      return res.body.data.rotateWebhookSecret.webhookSubscription.secret as string;
    };

    const first = await create('gql-widened');
    expect(first.body.errors, JSON.stringify(first.body)).toBeUndefined();
    const { id } = first.body.data.createWebhook.webhookSubscription;
    const widened = await app.gql(
      'mutation($input: UpdateWebhookInput!) { updateWebhook(input: $input) { webhookSubscription { eventTypes } } }',
      { input: { id, eventTypes: ['PATIENT_CREATED', 'CHAT_MESSAGE_RECEIVED'] } },
      chat,
    );
    expect(widened.body.errors, JSON.stringify(widened.body)).toBeUndefined();
    const s1 = await rotate(id);
    const replay = await create('gql-widened');
    expect(replay.body.errors?.[0]?.extensions?.code, JSON.stringify(replay.body)).toBe('not_found');
    expect(JSON.stringify(replay.body)).not.toContain(s1);

    const other = await create('gql-rotated');
    const sub = other.body.data.createWebhook.webhookSubscription;
    const s2 = await rotate(sub.id);
    const masked = await create('gql-rotated');
    expect(masked.body.errors).toBeUndefined();
    expect(masked.body.data.createWebhook.webhookSubscription.secret).toBe(
      `whsec_****${sub.secret.slice(-5, -1)}`,
    );
    expect(JSON.stringify(masked.body)).not.toContain(s2);
  });

  it("a rotation's replay by a key that lost sight of the subscription is a 404 too", async () => {
    const { chat, plain } = await clinic();
    const r = await receiver();
    const { id } = (await app.post('/v1/webhooks', { url: r.url, event_types: ['patient.created'] }, plain))
      .body.data;
    const idem = { 'idempotency-key': 'rotate-then-widen' };
    const mine = await app.post(`/v1/webhooks/${id}/rotate-secret`, {}, plain, idem);
    expect(mine.body.data.secret).toMatch(WHOLE_SECRET);
    await app.send('PATCH', `/v1/webhooks/${id}`, { event_types: [] }, chat);
    const replay = await app.post(`/v1/webhooks/${id}/rotate-secret`, {}, plain, idem);
    expect([replay.status, replay.body.error?.code]).toEqual([404, 'not_found']);
    expect(JSON.stringify(replay.body)).not.toMatch(WHOLE_SECRET);
  });
});

/** One operation on the subscription `id` (delivery `d`): REST or GraphQL, status or error code. */
interface Op {
  name: string;
  run(key: string, ids: { id: string; d: string }): Promise<{ status: number; body: any }>;
}

const since = '2031-01-01T00:00:00Z';
let mineUrl = '';

const rest: Op[] = [
  { name: 'GET /v1/webhooks/{id}', run: (k, { id }) => app.get(`/v1/webhooks/${id}`, k) },
  {
    name: 'PATCH /v1/webhooks/{id} url',
    run: (k, { id }) => app.send('PATCH', `/v1/webhooks/${id}`, { url: mineUrl }, k),
  },
  {
    name: 'PATCH /v1/webhooks/{id} enabled',
    run: (k, { id }) => app.send('PATCH', `/v1/webhooks/${id}`, { enabled: false }, k),
  },
  {
    name: 'PATCH /v1/webhooks/{id} narrowing its types with the url',
    run: (k, { id }) =>
      app.send('PATCH', `/v1/webhooks/${id}`, { url: mineUrl, event_types: ['patient.created'] }, k),
  },
  {
    name: 'POST /v1/webhooks/{id}/rotate-secret',
    run: (k, { id }) => app.post(`/v1/webhooks/${id}/rotate-secret`, {}, k),
  },
  { name: 'POST /v1/webhooks/{id}/test', run: (k, { id }) => app.post(`/v1/webhooks/${id}/test`, {}, k) },
  {
    name: 'POST /v1/webhooks/{id}/test of a visible type',
    run: (k, { id }) => app.post(`/v1/webhooks/${id}/test`, { type: 'patient.created' }, k),
  },
  {
    name: 'POST /v1/webhooks/{id}/recover',
    run: (k, { id }) => app.post(`/v1/webhooks/${id}/recover`, { since }, k),
  },
  {
    name: 'GET /v1/webhooks/{id}/deliveries',
    run: (k, { id }) => app.get(`/v1/webhooks/${id}/deliveries`, k),
  },
  {
    name: 'POST /v1/webhooks/{id}/deliveries/{d}/retry',
    run: (k, { id, d }) => app.post(`/v1/webhooks/${id}/deliveries/${d}/retry`, {}, k),
  },
  {
    name: 'DELETE /v1/webhooks/{id}',
    run: (k, { id }) => app.send('DELETE', `/v1/webhooks/${id}`, undefined, k),
  },
];

/** A GraphQL mutation as an Op: its first error's code as a status-like answer. */
const gqlOp = (name: string, query: string, input: (ids: { id: string; d: string }) => object): Op => ({
  name: `GraphQL ${name}`,
  run: async (k, ids) => {
    const res = await app.gql(query, { input: input(ids) }, k);
    const code = res.body.errors?.[0]?.extensions?.code;
    return { status: code === 'not_found' ? 404 : code ? 400 : 200, body: res.body };
  },
});

const graphql: Op[] = [
  {
    name: 'GraphQL node(id:)',
    run: async (k, { id }) => {
      const res = await app.gql(`{ node(id: "${id}") { id ... on WebhookSubscription { url } } }`, {}, k);
      const code = res.body.errors?.[0]?.extensions?.code;
      return { status: code === 'not_found' || res.body.data?.node == null ? 404 : 200, body: res.body };
    },
  },
  gqlOp(
    'updateWebhook',
    'mutation($input: UpdateWebhookInput!) { updateWebhook(input: $input) { webhookSubscription { url } } }',
    ({ id }) => ({ id, url: mineUrl }),
  ),
  gqlOp(
    'rotateWebhookSecret',
    'mutation($input: RotateWebhookSecretInput!) { rotateWebhookSecret(input: $input) { webhookSubscription { secret } } }',
    ({ id }) => ({ id }),
  ),
  gqlOp(
    'testWebhook',
    'mutation($input: TestWebhookInput!) { testWebhook(input: $input) { event { id } } }',
    ({ id }) => ({ id }),
  ),
  gqlOp(
    'recoverWebhook',
    'mutation($input: RecoverWebhookInput!) { recoverWebhook(input: $input) { webhookSubscription { id } } }',
    ({ id }) => ({ id, since }),
  ),
  gqlOp(
    'retryWebhookDelivery',
    'mutation($input: RetryWebhookDeliveryInput!) { retryWebhookDelivery(input: $input) { webhookSubscription { id } } }',
    ({ id, d }) => ({ id, deliveryId: d }),
  ),
  gqlOp(
    'deleteWebhook',
    'mutation($input: DeleteWebhookInput!) { deleteWebhook(input: $input) { webhookSubscription { id } } }',
    ({ id }) => ({ id }),
  ),
];

/** Everything a refused operation must have left as it was, read by the key that sees it. */
async function stateOf(chat: string, id: string) {
  const sub = (await app.get(`/v1/webhooks/${id}`, chat)).body.data;
  const log = (await app.get(`/v1/webhooks/${id}/deliveries?limit=100`, chat)).body.data;
  return { sub, attempts: log.length };
}

describe('one visibility rule: every webhook operation of a key without chat:read on a subscription receiving chat.*', () => {
  for (const types of [['chat.message.received', 'patient.created'], []]) {
    it(`event_types ${JSON.stringify(types)}: a 404 on every route and in GraphQL, nothing changed; the chat key may do each`, async () => {
      const { chat, plain } = await clinic();
      const r = await receiver();
      mineUrl = (await receiver()).url;
      const made = await app.post('/v1/webhooks', { url: r.url, event_types: types }, chat);
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      r.secret = made.body.data.secret;
      const id = made.body.data.id as string;
      // One delivered attempt (a patient.created), for the log and the retry.
      const p = await app.post('/v1/patients', { first_name: 'Vis', last_name: 'Ibility' }, chat);
      expect(p.status, JSON.stringify(p.body)).toBe(201);
      await r.waitFor(1);
      let log = await app.get(`/v1/webhooks/${id}/deliveries`, chat);
      for (let i = 0; !log.body.data?.length && i < 100; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        log = await app.get(`/v1/webhooks/${id}/deliveries`, chat);
      }
      const ids = { id, d: log.body.data[0].id as string };
      const before = await stateOf(chat, id);

      for (const op of [...rest, ...graphql]) {
        const res = await op.run(plain, ids);
        expect([op.name, res.status], JSON.stringify(res.body)).toEqual([op.name, 404]);
        expect(JSON.stringify(res.body), op.name).not.toMatch(WHOLE_SECRET);
      }
      // Not listed, REST or GraphQL.
      const list = await app.get('/v1/webhooks?limit=100', plain);
      expect(list.status).toBe(200);
      expect(list.body.data.map((s: { id: string }) => s.id)).not.toContain(id);
      const conn = await app.gql('{ webhooks(first: 100) { edges { node { id } } } }', {}, plain);
      expect(conn.body.errors).toBeUndefined();
      expect(conn.body.data.webhooks.edges.map((e: any) => e.node.id)).not.toContain(id);
      // POST /v1/events samples only subscriptions the key sees: none here.
      const trigger = await app.post('/v1/events', { type: 'patient.created' }, plain);
      expect([trigger.status, trigger.body.error?.code], JSON.stringify(trigger.body)).toEqual([
        409,
        'conflict',
      ]);

      // Nothing moved: the subscription, its secret and its log are as they were, and nothing came.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await stateOf(chat, id)).toEqual(before);
      expect(r.hits).toBe(1);

      // The same table with the chat key: each operation is its to do (not a vacuous 404).
      for (const op of [...rest, ...graphql].filter(
        (o) => !o.name.includes('delete') && !o.name.includes('DELETE'),
      )) {
        const res = await op.run(chat, ids);
        expect([op.name, res.status < 300], JSON.stringify(res.body)).toEqual([op.name, true]);
        // Keep it enabled and at this clinic's receiver for the next operation.
        await app.send(
          'PATCH',
          `/v1/webhooks/${id}`,
          { url: r.url, enabled: true, event_types: types },
          chat,
        );
      }
      const listed = await app.get('/v1/webhooks?limit=100', chat);
      expect(listed.body.data.map((s: { id: string }) => s.id)).toContain(id);
      expect((await app.send('DELETE', `/v1/webhooks/${id}`, undefined, chat)).status).toBe(200);
    });
  }

  it('a subscription the key sees is listed and served as before', async () => {
    const { chat, plain } = await clinic();
    const r = await receiver();
    const visible = await app.post('/v1/webhooks', { url: r.url, event_types: ['patient.created'] }, chat);
    const hidden = await app.post('/v1/webhooks', { url: r.url }, chat);
    const listed = (await app.get('/v1/webhooks?limit=100', plain)).body.data.map(
      (s: { id: string }) => s.id,
    );
    expect(listed).toEqual([visible.body.data.id]);
    expect((await app.get(`/v1/webhooks/${visible.body.data.id}`, plain)).status).toBe(200);
    expect((await app.get(`/v1/webhooks/${hidden.body.data.id}`, plain)).status).toBe(404);
  });
});
