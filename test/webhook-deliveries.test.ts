import { beforeAll, describe, expect, it } from 'vitest';
import { Clinic, Event, WebhookDelivery, WebhookSubscription } from '../src/entities/index.ts';
import { toId } from '../src/lib/ids.ts';
import {
  RESPONSE_EXCERPT_MAX,
  WebhookDelivery as Resource,
  responseExcerpt,
} from '../src/services/webhooks/delivery.resource.ts';
import { graphqlOf } from './graphql-form.ts';
import { selectionOf, startTestApp, type TestApp } from './helpers.ts';

/**
 * The webhook delivery log's read (issue 17): GET /v1/webhooks/{id}/deliveries and the GraphQL
 * `deliveries` connection of WebhookSubscription. The worker does not exist yet, so attempts are
 * inserted as rows, for real events recorded by real writes.
 */
let app: TestApp;
let clinicId: number;
let manage: string;
let noManage: string;
let otherManage: string;
/** Public ids: the subscription with the log, a second one, and another clinic's. */
let hook: string;
let quiet: string;
let otherHook: string;
/** The events the attempts delivered, with their types. */
const events: { id: number; type: string }[] = [];

const PUBLIC = 'https://93.184.215.14/hooks';
const at = (minute: number) => new Date(Date.UTC(2026, 10, 1, 10, minute));

beforeAll(async () => {
  // No deliveries: these subscriptions point at a public address.
  app = await startTestApp({ workers: false });
  const c = await app.clinicWithKey('dental', ['webhooks:manage', 'patients:write']);
  clinicId = c.clinicId;
  manage = c.key;
  noManage = await app.key(clinicId, ['patients:read', 'patients:write', 'chat:read']);
  const o = await app.clinicWithKey('dental', ['webhooks:manage']);
  otherManage = o.key;
  hook = (await app.post('/v1/webhooks', { url: PUBLIC }, manage)).body.data.id;
  quiet = (await app.post('/v1/webhooks', { url: `${PUBLIC}/quiet` }, manage)).body.data.id;
  otherHook = (await app.post('/v1/webhooks', { url: PUBLIC }, otherManage)).body.data.id;
  for (const first of ['Ada', 'Ben']) {
    const r = await app.post('/v1/patients', { first_name: first, last_name: 'Log' }, manage);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  }
  const em = app.orm.em.fork();
  em.setFilterParams('tenant', { clinicId });
  for (const e of await em.find(Event, {}, { orderBy: { id: 'asc' } }))
    events.push({ id: e.id, type: e.type });
  expect(events.length).toBeGreaterThanOrEqual(2);
  await insertLog(clinicId, hook, quiet);
  await insertLog(o.clinicId, otherHook, null);
});

/** The attempts, as the worker will write them: numeric id → the row's columns. */
const rows = new Map<number, Record<string, unknown>>();

/**
 * Seven attempts of two events to `hook` (two at the same instant: ties go by id, newest first),
 * one to `quiet`; another clinic's log gets one attempt of its own event.
 */
async function insertLog(clinic: number, sub: string, second: string | null) {
  const em = app.orm.em.fork();
  em.setFilterParams('tenant', { clinicId: clinic });
  const subscription = em.getReference(WebhookSubscription, Number(sub.split('_')[1]));
  let [event] = await em.find(Event, {}, { limit: 1 });
  if (!event) {
    event = em.create(Event, {
      clinic: em.getReference(Clinic, clinic),
      type: 'patient.updated',
      scope: 'patients:read',
      data: {},
    });
  }
  const base = { clinic: em.getReference(Clinic, clinic), subscription };
  const made: WebhookDelivery[] = [];
  const add = (v: Partial<WebhookDelivery> & { event: Event; attemptedAt: Date }) => {
    const d = em.create(WebhookDelivery, {
      ...base,
      trigger: 'scheduled',
      status: 'failed',
      attempt: 1,
      nextAttemptAt: null,
      responseStatus: null,
      responseExcerpt: null,
      error: null,
      durationMs: null,
      ...v,
    });
    made.push(d);
  };
  if (second === null) {
    add({ event, attemptedAt: at(1), status: 'succeeded', responseStatus: 200, durationMs: 5 });
  } else {
    const [e1, e2] = [em.getReference(Event, events[0].id), em.getReference(Event, events[1].id)];
    add({
      event: e1,
      attemptedAt: at(0),
      responseStatus: 500,
      responseExcerpt: 'Internal error',
      error: 'HTTP 500',
      durationMs: 120,
      nextAttemptAt: at(1),
    });
    add({
      event: e1,
      attemptedAt: at(1),
      attempt: 2,
      error: 'Timed out after 10000 ms',
      durationMs: 10000,
      nextAttemptAt: at(5),
    });
    add({ event: e2, attemptedAt: at(2), status: 'succeeded', responseStatus: 204, durationMs: 31 });
    add({
      event: e1,
      attemptedAt: at(3),
      trigger: 'manual',
      attempt: 3,
      error: 'Connection refused',
      durationMs: 2,
      nextAttemptAt: at(5),
    });
    add({
      event: e1,
      attemptedAt: at(5),
      attempt: 4,
      status: 'succeeded',
      responseStatus: 200,
      responseExcerpt: 'ok',
      durationMs: 40,
    });
    add({
      event: e2,
      attemptedAt: at(5),
      trigger: 'manual',
      attempt: 2,
      status: 'succeeded',
      responseStatus: 202,
      responseExcerpt: responseExcerpt('x'.repeat(5000)),
      durationMs: 12,
    });
    add({
      event: e2,
      attemptedAt: at(6),
      trigger: 'manual',
      attempt: 3,
      status: 'failed',
      error: 'No answer within 10000 ms (timed out).',
      durationMs: 10_000,
    });
    add({
      ...base,
      subscription: em.getReference(WebhookSubscription, Number(second.split('_')[1])),
      event: e2,
      attemptedAt: at(9),
      status: 'succeeded',
    });
  }
  await em.flush();
  if (second !== null) for (const d of made.slice(0, -1)) rows.set(d.id, { ...d });
}

/** The log of `hook` as the API must answer it, newest first (ties: the later row first). */
function expected() {
  const typeOf = new Map(events.map((e) => [e.id, e.type]));
  return [...rows.entries()]
    .sort(([a, x], [b, y]) => (y.attemptedAt as Date).getTime() - (x.attemptedAt as Date).getTime() || b - a)
    .map(([id, r]) => {
      const eventId = (r.event as Event).id;
      return {
        id: toId('WebhookDelivery', id),
        subscription: { id: hook, url: PUBLIC },
        event: { id: toId('Event', eventId), type: typeOf.get(eventId) },
        trigger: r.trigger,
        status: r.status,
        attempt: r.attempt,
        attempted_at: (r.attemptedAt as Date).toISOString(),
        response_status: r.responseStatus,
        duration_ms: r.durationMs,
        response_excerpt: r.responseExcerpt,
        error: r.error,
        next_attempt_at: r.nextAttemptAt ? (r.nextAttemptAt as Date).toISOString() : null,
      };
    });
}

describe('GET /v1/webhooks/{id}/deliveries', () => {
  it('every attempt, newest first by attempted_at (ties by id), with its fields', async () => {
    const r = await app.get(`/v1/webhooks/${hook}/deliveries`, manage);
    expect(r.status).toBe(200);
    expect(r.body.next_cursor).toBeNull();
    expect(r.body.data).toEqual(expected());
    expect(r.body.data.map((d: any) => d.attempted_at.slice(11, 16))).toEqual([
      '10:06',
      '10:05',
      '10:05',
      '10:03',
      '10:02',
      '10:01',
      '10:00',
    ]);
    expect(r.body.data[0].id).toMatch(/^whd_\d+$/);
    // The excerpt was stored truncated.
    const long = r.body.data.find((d: any) => d.response_status === 202);
    expect(long.response_excerpt).toBe('x'.repeat(RESPONSE_EXCERPT_MAX));
  });

  it('pages with a cursor: every attempt once, in order', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const r = await app.get(`/v1/webhooks/${hook}/deliveries?limit=2${q}`, manage);
      expect(r.status).toBe(200);
      expect(r.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...r.body.data.map((d: any) => d.id));
      cursor = r.body.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(4);
    expect(seen).toEqual(expected().map((d) => d.id));
  });

  it("a subscription's log holds only its own attempts", async () => {
    const r = await app.get(`/v1/webhooks/${quiet}/deliveries`, manage);
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(1);
    expect(r.body.data[0].subscription).toEqual({ id: quiet, url: `${PUBLIC}/quiet` });
  });

  it('needs webhooks:manage (403)', async () => {
    const r = await app.get(`/v1/webhooks/${hook}/deliveries`, noManage);
    expect(r.status).toBe(403);
    expect(r.body.error.required_scopes).toEqual(['webhooks:manage']);
  });

  it("another clinic's, an unknown or a malformed subscription: 404", async () => {
    for (const [id, key] of [
      [hook, otherManage],
      [otherHook, manage],
      ['wh_999999', manage],
      ['wh_x', manage],
    ]) {
      const r = await app.get(`/v1/webhooks/${id}/deliveries`, key);
      expect(r.status, id).toBe(404);
      expect(r.body.error.code).toBe('not_found');
    }
    // The other clinic sees its own log only.
    const own = await app.get(`/v1/webhooks/${otherHook}/deliveries`, otherManage);
    expect(own.body.data).toHaveLength(1);
    expect(own.body.data.map((d: any) => d.id)).not.toContain(expected()[0].id);
  });

  it('a bad limit or cursor: 422 naming it', async () => {
    const l = await app.get(`/v1/webhooks/${hook}/deliveries?limit=0`, manage);
    expect([l.status, l.body.error.param]).toEqual([422, 'limit']);
    const c = await app.get(`/v1/webhooks/${hook}/deliveries?cursor=nope`, manage);
    expect([c.status, c.body.error.param]).toEqual([422, 'cursor']);
  });
});

describe('GraphQL: WebhookSubscription.deliveries', () => {
  const selection = selectionOf(Resource);

  it('equals the REST page, batched for a page of subscriptions, and pages with after', async () => {
    const before = app.queries.length;
    const all = await app.gql(
      `{ webhooks(first: 10) { edges { node { id deliveries(first: 100) { edges { node ${selection} } } } } } }`,
      {},
      manage,
    );
    expect(all.body.errors).toBeUndefined();
    // One statement reads the first page of every subscription's log.
    expect(app.queries.slice(before).filter((q) => q.includes('"webhook_delivery"'))).toHaveLength(1);
    const byHook = new Map<string, any[]>(
      all.body.data.webhooks.edges.map((e: any) => [
        e.node.id,
        e.node.deliveries.edges.map((d: any) => d.node),
      ]),
    );
    expect(byHook.get(hook)).toEqual(graphqlOf(expected(), Resource));
    expect(byHook.get(quiet)).toEqual(
      graphqlOf((await app.get(`/v1/webhooks/${quiet}/deliveries`, manage)).body.data, Resource),
    );

    const seen: string[] = [];
    let after: string | null = null;
    do {
      const g: any = await app.gql(
        `query($after: String) { node(id: "${hook}") { ... on WebhookSubscription {
           deliveries(first: 3, after: $after) { pageInfo { hasNextPage endCursor } edges { node { id } } } } } }`,
        { after },
        manage,
      );
      expect(g.body.errors).toBeUndefined();
      const page = g.body.data.node.deliveries;
      seen.push(...page.edges.map((e: any) => e.node.id));
      after = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
    } while (after);
    expect(seen).toEqual(expected().map((d) => d.id));
  });

  it('a deleted subscription and its log are out of sight', async () => {
    const gone = (await app.post('/v1/webhooks', { url: PUBLIC }, manage)).body.data.id;
    expect((await app.send('DELETE', `/v1/webhooks/${gone}`, undefined, manage)).status).toBe(200);
    expect((await app.get(`/v1/webhooks/${gone}/deliveries`, manage)).status).toBe(404);
    const g = await app.gql(
      `{ node(id: "${gone}") { ... on WebhookSubscription { deliveries { edges { node { id } } } } } }`,
      {},
      manage,
    );
    expect(g.body.data.node).toBeNull();
  });
});

describe('responseExcerpt', () => {
  it('keeps a short body whole and the first RESPONSE_EXCERPT_MAX characters of a long one', () => {
    expect(responseExcerpt('')).toBe('');
    expect(responseExcerpt('ok')).toBe('ok');
    expect(responseExcerpt('y'.repeat(RESPONSE_EXCERPT_MAX))).toHaveLength(RESPONSE_EXCERPT_MAX);
    expect(responseExcerpt(`${'a'.repeat(RESPONSE_EXCERPT_MAX)}b`)).toBe('a'.repeat(RESPONSE_EXCERPT_MAX));
  });
});
