import { beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../src/events/types.ts';
import { checkDeliveryUrl } from '../src/services/webhooks/webhooks.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * Webhook subscriptions (issue 17, first part): POST, GET (list and one), DELETE over REST and
 * GraphQL; the URL's checks (https, the SSRF guard's address ranges), the event types' rules
 * (unknown 422, chat.* needs chat:read, the default list), the secret whole only at creation.
 * The test app's clinics are test clinics: their receivers may be plain http on loopback (docs/test-mode.md).
 */
let app: TestApp;
let manage: string;
let withChat: string;
let readOnly: string;
let other: string;
let clinicId: number;

const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
const MASKED = /^whsec_\*\*\*\*[A-Za-z0-9+/]{4}$/;
const PUBLIC = 'https://93.184.215.14/hooks';
const NON_CHAT = EVENT_TYPES.filter((t) => !t.startsWith('chat.'));

beforeAll(async () => {
  // No deliveries: these subscriptions point at a public address.
  app = await startTestApp({ workers: false });
  const c = await app.clinicWithKey('dental', ['webhooks:manage']);
  manage = c.key;
  clinicId = c.clinicId;
  withChat = await app.key(c.clinicId, ['webhooks:manage', 'chat:read']);
  readOnly = await app.key(c.clinicId, ['patients:read', 'chat:read']);
  other = (await app.clinicWithKey('dental', ['webhooks:manage'])).key;
});

const create = (body: Record<string, unknown>, key = manage, headers: Record<string, string> = {}) =>
  app.post('/v1/webhooks', body, key, headers);

const refusal = async (body: Record<string, unknown>, key = manage) => {
  const r = await create(body, key);
  return { status: r.status, error: r.body.error };
};

describe('POST /v1/webhooks', () => {
  it('201 with the whole secret once; GET, the list and GraphQL mask it', async () => {
    const r = await create({ url: PUBLIC, event_types: ['patient.created', 'appointment.cancelled'] });
    expect(r.status).toBe(201);
    const created = r.body.data;
    expect(created).toMatchObject({
      url: PUBLIC,
      event_types: ['patient.created', 'appointment.cancelled'],
      enabled: true,
      disabled_at: null,
      disabled_reason: null,
    });
    expect(created.id).toMatch(/^wh_\d+$/);
    expect(created.secret).toMatch(SECRET);
    const masked = { ...created, secret: `whsec_****${created.secret.slice(-5, -1)}` };
    const one = await app.get(`/v1/webhooks/${created.id}`, manage);
    expect(one.status).toBe(200);
    expect(one.body.data).toEqual(masked);
    expect(one.body.data.secret).toMatch(MASKED);
    const list = await app.get('/v1/webhooks', manage);
    expect(list.body.data.find((s: any) => s.id === created.id)).toEqual(masked);
    expect(list.body.next_cursor).toBeNull();
    const g = await app.gql(
      `{ webhooks(first: 10) { edges { node { id secret } } }
         node(id: "${created.id}") { ... on WebhookSubscription { secret url } } }`,
      {},
      manage,
    );
    expect(g.body.errors).toBeUndefined();
    expect(g.body.data.node).toEqual({ secret: masked.secret, url: PUBLIC });
    expect(g.body.data.webhooks.edges.map((e: any) => e.node.secret)).toContain(masked.secret);
    expect(JSON.stringify(g.body)).not.toContain(created.secret);
  });

  it('every subscription its own secret', async () => {
    const a = (await create({ url: PUBLIC })).body.data.secret;
    const b = (await create({ url: PUBLIC })).body.data.secret;
    expect(a).not.toBe(b);
  });

  it('an https URL is required of a live clinic, http or https of a test clinic (422 url)', async () => {
    const live = (await app.clinicWithKey('dental', ['webhooks:manage'], 'live clinic', { mode: 'live' }))
      .key;
    const http = await refusal({ url: 'http://93.184.215.14/hooks' }, live);
    expect(http.status).toBe(422);
    expect(http.error).toMatchObject({ code: 'validation_failed', param: 'url' });
    expect(http.error.message).toMatch(/must be an https URL, not http:.*test clinics only/);
    expect((await create({ url: 'http://93.184.215.14/hooks' })).status).toBe(201);
    for (const url of ['ftp://93.184.215.14/x', 'not a url', '']) {
      const r = await refusal({ url });
      expect(r.status, url).toBe(422);
      expect(r.error).toMatchObject({ code: 'validation_failed', param: 'url' });
    }
    expect((await refusal({})).error.param).toBe('url');
    expect((await refusal({ url: 'https://user:pw@93.184.215.14/' })).error.param).toBe('url');
  });

  it('a private, link-local, metadata or multicast address is refused, loopback allowed (a test clinic)', async () => {
    for (const url of [
      'https://10.1.2.3/hooks',
      'https://192.168.0.10/hooks',
      'https://169.254.169.254/latest/meta-data',
      'http://169.254.169.254/latest/meta-data',
      'https://168.63.129.16/',
      'https://224.0.0.1/',
      'https://[::ffff:10.0.0.1]/',
      'https://[fd00::1]/',
      'https://0.0.0.0/',
    ]) {
      const r = await refusal({ url });
      expect(r.status, url).toBe(422);
      expect(r.error).toMatchObject({ code: 'validation_failed', param: 'url' });
    }
    for (const url of ['http://127.0.0.1:9/hooks', 'http://localhost:9/hooks', 'https://localhost/hooks']) {
      const r = await create({ url });
      expect(r.status, url).toBe(201);
    }
  });

  it("a live clinic's: loopback (literal or resolved) is refused, and plain http always; a test clinic's: private ranges still", async () => {
    for (const url of ['https://127.0.0.1/', 'https://localhost/', 'http://127.0.0.1/', 'https://[::1]/']) {
      await expect(checkDeliveryUrl(url, 'live'), url).rejects.toMatchObject({ param: 'url' });
    }
    // The refusal of a loopback or plain-http receiver names the way out (a test clinic); another refusal does not.
    for (const url of ['http://127.0.0.1:4242/hooks', 'https://localhost/hooks', 'http://example.com/hooks'])
      await expect(checkDeliveryUrl(url, 'live'), url).rejects.toThrow(
        /allowed for test clinics only \(cg_test_ keys/,
      );
    await expect(checkDeliveryUrl('https://10.0.0.1/', 'live')).rejects.not.toThrow(/test clinics/);
    await expect(checkDeliveryUrl('https://10.0.0.1/', 'test')).rejects.toMatchObject({ param: 'url' });
    await expect(checkDeliveryUrl('http://10.0.0.1/', 'test')).rejects.toMatchObject({ param: 'url' });
    expect(await checkDeliveryUrl(PUBLIC, 'live')).toBe(PUBLIC);
    expect(await checkDeliveryUrl('http://127.0.0.1:4242/hooks', 'test')).toBe('http://127.0.0.1:4242/hooks');
  });

  it('an unknown event type is a 422 naming it (event_types)', async () => {
    const r = await refusal({ url: PUBLIC, event_types: ['patient.created', 'patient.exploded'] });
    expect(r.status).toBe(422);
    expect(r.error).toMatchObject({ code: 'validation_failed', param: 'event_types' });
    expect(r.error.message).toContain('patient.exploded');
    expect((await refusal({ url: PUBLIC, event_types: 'patient.created' })).error.param).toBe('event_types');
  });

  it('a chat.* type without chat:read is a 403; with it, 201', async () => {
    const r = await refusal({ url: PUBLIC, event_types: ['patient.created', 'chat.message.received'] });
    expect(r.status).toBe(403);
    expect(r.error).toMatchObject({ code: 'forbidden', required_scopes: ['chat:read'] });
    const ok = await create({ url: PUBLIC, event_types: ['chat.message.received'] }, withChat);
    expect(ok.status).toBe(201);
    expect(ok.body.data.event_types).toEqual(['chat.message.received']);
  });

  it('omitted or empty event_types: every type but chat.* without chat:read, [] (every type) with it', async () => {
    for (const body of [{ url: PUBLIC }, { url: PUBLIC, event_types: [] }]) {
      expect((await create(body)).body.data.event_types).toEqual(NON_CHAT);
      expect((await create(body, withChat)).body.data.event_types).toEqual([]);
    }
    expect(NON_CHAT.length).toBeGreaterThan(0);
  });

  it('Idempotency-Key: the same answer (the whole secret again), one subscription', async () => {
    const headers = { 'idempotency-key': 'wh-create-1' };
    const first = await create({ url: 'https://93.184.215.14/once' }, manage, headers);
    const again = await create({ url: 'https://93.184.215.14/once' }, manage, headers);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    const list = (await app.get('/v1/webhooks?limit=100', manage)).body.data;
    expect(list.filter((s: any) => s.url === 'https://93.184.215.14/once')).toHaveLength(1);
    // The stored answer of the key holds the masked secret only, and a replay after a DELETE
    // answers it masked.
    const stored = await app.orm.em
      .fork()
      .getConnection()
      .execute<{ response: unknown }[]>(
        `select "response" from "idempotency_key" where "key_hash" = encode(sha256('wh-create-1'), 'hex')`,
      );
    expect(JSON.stringify(stored)).not.toContain(first.body.data.secret);
    await app.send('DELETE', `/v1/webhooks/${first.body.data.id}`, undefined, manage);
    const afterDelete = await create({ url: 'https://93.184.215.14/once' }, manage, headers);
    expect(afterDelete.body.data.secret).not.toBe(first.body.data.secret);
    expect(afterDelete.body.data.secret).toMatch(/^whsec_\*{4}/);
  });

  it('GraphQL: createWebhook answers the whole secret', async () => {
    const g = await app.gql(
      `mutation { createWebhook(input: { url: "${PUBLIC}" }) { webhookSubscription { id secret eventTypes } } }`,
      {},
      withChat,
    );
    expect(g.body.errors).toBeUndefined();
    expect(g.body.data.createWebhook.webhookSubscription.secret).toMatch(SECRET);
    expect(g.body.data.createWebhook.webhookSubscription.eventTypes).toEqual([]);
  });

  it('GraphQL: eventTypes is a list of the EventType enum, stored as the REST type names', async () => {
    const g = await app.gql(
      `mutation { createWebhook(input: { url: "${PUBLIC}", eventTypes: [APPOINTMENT_CREATED, CHAT_MESSAGE_READ] }) { webhookSubscription { id eventTypes } } }`,
      {},
      withChat,
    );
    expect(g.body.errors).toBeUndefined();
    const created = g.body.data.createWebhook.webhookSubscription;
    expect(created.eventTypes).toEqual(['APPOINTMENT_CREATED', 'CHAT_MESSAGE_READ']);
    const rest = await app.get(`/v1/webhooks/${created.id}`, withChat);
    expect(rest.body.data.event_types).toEqual(['appointment.created', 'chat.message.read']);
    // An unknown name is GraphQL's validation error, before anything is written.
    const bad = await app.gql(
      `mutation { createWebhook(input: { url: "${PUBLIC}", eventTypes: [PATIENT_EXPLODED] }) { webhookSubscription { id } } }`,
      {},
      withChat,
    );
    expect(bad.body.errors[0].extensions.code).toBe('invalid_request');
  });
});

describe('scope and clinic', () => {
  it('webhooks:manage is required (403) for every operation', async () => {
    const id = (await create({ url: PUBLIC })).body.data.id;
    for (const r of [
      await create({ url: PUBLIC }, readOnly),
      await app.get('/v1/webhooks', readOnly),
      await app.get(`/v1/webhooks/${id}`, readOnly),
      await app.send('DELETE', `/v1/webhooks/${id}`, undefined, readOnly),
    ]) {
      expect(r.status).toBe(403);
      expect(r.body.error.required_scopes).toEqual(['webhooks:manage']);
    }
    const g = await app.gql('{ webhooks(first: 1) { edges { node { id } } } }', {}, readOnly);
    expect(g.body.errors[0].extensions.code).toBe('forbidden');
  });

  it("another clinic's subscription is a 404 and not listed", async () => {
    const id = (await create({ url: PUBLIC })).body.data.id;
    expect((await app.get(`/v1/webhooks/${id}`, other)).status).toBe(404);
    expect((await app.send('DELETE', `/v1/webhooks/${id}`, undefined, other)).status).toBe(404);
    expect((await app.get('/v1/webhooks', other)).body.data).toEqual([]);
    expect((await app.get(`/v1/webhooks/${id}`, manage)).status).toBe(200);
    expect((await app.get('/v1/webhooks/wh_x', manage)).status).toBe(404);
  });
});

describe('DELETE /v1/webhooks/{id}', () => {
  it('200 with the subscription, disabled; then a 404 and not listed; a second DELETE 404', async () => {
    const created = (await create({ url: PUBLIC })).body.data;
    const r = await app.send('DELETE', `/v1/webhooks/${created.id}`, undefined, manage);
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ id: created.id, url: PUBLIC, enabled: false });
    expect(r.body.data.secret).toMatch(MASKED);
    expect((await app.get(`/v1/webhooks/${created.id}`, manage)).status).toBe(404);
    const list = (await app.get('/v1/webhooks?limit=100', manage)).body.data;
    expect(list.map((s: any) => s.id)).not.toContain(created.id);
    const again = await app.send('DELETE', `/v1/webhooks/${created.id}`, undefined, manage);
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('not_found');
    // A stale If-Match does not reveal that a deleted subscription exists: 404, not 412.
    const stale = await app.send('DELETE', `/v1/webhooks/${created.id}`, undefined, manage, {
      'if-match': '"1"',
    });
    expect(stale.status).toBe(404);
    const g = await app.gql(`{ node(id: "${created.id}") { id } }`, {}, manage);
    expect(g.body.data?.node ?? null).toBeNull();
    // The row stays (its deliveries will point at it), deleted.
    const [row] = await app.orm.em
      .fork()
      .getConnection()
      .execute<{ deleted_at: Date | null; enabled: boolean }[]>(
        'select "deleted_at", "enabled" from "webhook_subscription" where "id" = ?',
        [Number(created.id.split('_')[1])],
      );
    expect(row.deleted_at).not.toBeNull();
    expect(row.enabled).toBe(false);
  });

  it('GraphQL: deleteWebhook', async () => {
    const id = (await create({ url: PUBLIC })).body.data.id;
    const g = await app.gql(
      `mutation { deleteWebhook(input: { id: "${id}" }) { webhookSubscription { id enabled } } }`,
      {},
      manage,
    );
    expect(g.body.errors).toBeUndefined();
    expect(g.body.data.deleteWebhook.webhookSubscription).toEqual({ id, enabled: false });
    expect((await app.get(`/v1/webhooks/${id}`, manage)).status).toBe(404);
  });
});

describe('no event', () => {
  it('creating and deleting record nothing in the outbox (this clinic only did those)', async () => {
    const rows = await app.orm.em
      .fork()
      .getConnection()
      .execute<{ n: string }[]>('select count(*) as n from "event" where "clinic_id" = ?', [clinicId]);
    expect(Number(rows[0].n)).toBe(0);
  });
});
