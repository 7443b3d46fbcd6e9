import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApolloClient, CombinedGraphQLErrors, HttpLink, InMemoryCache } from '@apollo/client';
import { fetchExchange, Client as UrqlClient } from '@urql/core';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  type ClinicEvent,
  type Connection,
  createRestClient,
  createSubscriptionClient,
  GraphQLRequestError,
  PatientsPageDocument,
  type PatientsPageQuery,
  request,
  type SubscriptionClient,
  SubscriptionClosedError,
} from '../packages/sdk/src/index.ts';
import { verifyWebhook, type WebhookEvent, WebhookVerificationError } from '../packages/sdk/src/webhooks.ts';
import { fixtures } from './fixtures.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.ts';
import { until } from './ws-client.ts';

/**
 * The SDK (packages/sdk) against a real app, used as an integrator would: GraphQL pages followed
 * by their cursor (the SDK's fetch, Apollo Client 4 and urql, one typed document), a booking
 * through the REST client, the events subscription seeing it and resuming after a dropped socket,
 * a refused key not retried, and a real delivery verified by verifyWebhook under both schemes.
 * test/sdk-package.test.ts runs the packed, built package on Node 20.
 */
let app: TestApp;
let key: string;
let connection: Connection;
let api: ReturnType<typeof createRestClient>;
let ids: { branch: string; provider: string; type: string };
const patients: string[] = [];
const cleanup: (() => unknown)[] = [];

beforeAll(async () => {
  app = await startTestApp();
  const c = await app.clinicWithKey('dental', [
    'patients:read',
    'patients:write',
    'appointments:read',
    'appointments:write',
    'catalog:read',
    'catalog:write',
    'webhooks:manage',
  ]);
  key = c.key;
  connection = { url: `${app.url}/graphql`, apiKey: key };
  api = createRestClient({ baseUrl: app.url, apiKey: key });
  const cat = await fixtures(app.orm, c.clinicId).catalog();
  ids = { branch: `br_${cat.branch.id}`, provider: `prv_${cat.provider.id}`, type: `apt_${cat.type.id}` };
  for (const last of ['Cohen', 'Levi', 'Mizrahi']) {
    const { data, error } = await api.POST('/v1/patients', {
      body: { first_name: 'Dana', last_name: last, phone: '0501234567' },
    });
    expect(error).toBeUndefined();
    patients.push(data!.data.id);
  }
  // Monday to Friday, 09:00-17:00 UTC; the app's clock stands on Sunday 2026-11-01 10:00 UTC.
  const { error } = await api.PUT('/v1/catalog/providers/{id}/working_hours', {
    params: { path: { id: ids.provider } },
    body: {
      data: [1, 2, 3, 4, 5].map((weekday) => ({
        branch_id: ids.branch,
        weekday,
        start: '09:00',
        end: '17:00',
      })),
    },
  });
  expect(error).toBeUndefined();
});

afterAll(async () => {
  for (const f of cleanup.reverse()) await f();
});

let day = 1;
/** Books through the REST client, on the next weekday 09:00 (each booking its own day). */
async function book(patient = patients[0]) {
  const start = `2026-11-${String(++day).padStart(2, '0')}T09:00:00.000Z`;
  const { data, error, response } = await api.POST('/v1/appointments', {
    params: { header: { 'Idempotency-Key': randomUUID() } },
    body: { patient_id: patient, branch_id: ids.branch, provider_id: ids.provider, type_id: ids.type, start },
  });
  expect(error, JSON.stringify(error)).toBeUndefined();
  expect(response.status).toBe(201);
  return data!.data;
}

function subscriptionClient(opts: { url?: string; apiKey?: string } = {}): SubscriptionClient {
  const client = createSubscriptionClient({
    url: opts.url ?? connection.url,
    apiKey: opts.apiKey ?? key,
    // Enough for the resume test's cut on a loaded machine: the retries run while it lasts.
    retryAttempts: 100,
    retryWait: () => new Promise((resolve) => setTimeout(resolve, 50)),
  });
  cleanup.push(() => client.dispose());
  return client;
}

describe('the SDK against a real app', () => {
  it('pages through patients by the cursor, with its fetch, Apollo Client 4 and urql alike', async () => {
    const pages: PatientsPageQuery[] = [];
    let after: string | null = null;
    do {
      const page: PatientsPageQuery = await request(connection, PatientsPageDocument, { first: 2, after });
      pages.push(page);
      after = page.patients?.pageInfo.hasNextPage ? page.patients.pageInfo.endCursor : null;
    } while (after);
    expect(pages.map((p) => p.patients?.edges.map((e) => e.node.id))).toEqual([
      patients.slice(0, 2),
      patients.slice(2),
    ]);
    expect(pages[0].patients?.edges[1].cursor).toBe(pages[0].patients?.pageInfo.endCursor);

    // The same typed document in Apollo Client 4 (which refuses string documents) and urql.
    const apollo = new ApolloClient({
      link: new HttpLink({ uri: connection.url, headers: { authorization: `Bearer ${key}` } }),
      cache: new InMemoryCache(),
    });
    const first = await apollo.query({ query: PatientsPageDocument, variables: { first: 2 } });
    expectTypeOf(first.data).toEqualTypeOf<PatientsPageQuery | undefined>();
    const cursor = first.data?.patients?.pageInfo.endCursor ?? null;
    const second = await apollo.query({
      query: PatientsPageDocument,
      variables: { first: 2, after: cursor },
    });
    expect(second.data?.patients?.edges.map((e) => e.node.id)).toEqual(patients.slice(2));

    const urql = new UrqlClient({
      url: connection.url,
      exchanges: [fetchExchange],
      fetchOptions: { headers: { authorization: `Bearer ${key}` } },
    });
    const page = await urql.query(PatientsPageDocument, { first: 2, after: cursor }).toPromise();
    expectTypeOf(page.data).toEqualTypeOf<PatientsPageQuery | undefined>();
    expect(page.data?.patients?.edges.map((e) => e.node.id)).toEqual(patients.slice(2));
  });

  it("a 401 reaches Apollo Client 4 as the service's GraphQL error, not a bare status code", async () => {
    // Apollo reads a non-2xx body only as application/graphql-response+json (GraphQL over HTTP),
    // which it asks for first; as application/json it shows "Received status code 401".
    const apollo = new ApolloClient({
      link: new HttpLink({ uri: connection.url, headers: { authorization: 'Bearer cg_test_not-a-key' } }),
      cache: new InMemoryCache(),
    });
    const refused = await apollo
      .query({ query: PatientsPageDocument, variables: { first: 1 } })
      .catch((e) => e);
    expect(CombinedGraphQLErrors.is(refused), String(refused)).toBe(true);
    expect(refused.errors[0]).toMatchObject({
      message: 'Invalid or revoked API key.',
      extensions: { code: 'unauthenticated' },
    });
    // The SDK's own fetch says the same.
    const plain = await request({ ...connection, apiKey: 'cg_test_not-a-key' }, PatientsPageDocument, {
      first: 1,
    }).catch((e) => e);
    expect(plain).toBeInstanceOf(GraphQLRequestError);
    expect(plain).toMatchObject({ status: 401, message: 'unauthenticated: Invalid or revoked API key.' });
  });

  it('the events subscription sees a REST booking, and resumes after its socket drops', async () => {
    // Through a proxy that can drop the socket under the client (test/tcp-proxy.ts).
    const port = Number(new URL(app.url).port);
    const proxy: TcpProxy = await startTcpProxy({ host: '127.0.0.1', port });
    cleanup.push(() => proxy.close());
    const client = subscriptionClient({ url: proxy.through(connection.url) });
    let connections = 0;
    client.on('connected', () => connections++);
    const events = client.events({ types: ['APPOINTMENT_CREATED'] });
    const seen: ClinicEvent[] = [];
    const next = async () => {
      const r = await events.next();
      if (r.done) throw new Error('the subscription ended');
      seen.push(r.value);
      return r.value;
    };
    // No cursor: live events only, so the booking waits until the subscription is on the server.
    const first = next();
    first.catch(() => {});
    await until(() => app.server.app.eventHub.size === 1);
    const a = await book();
    expect(await first).toMatchObject({ type: 'APPOINTMENT_CREATED', data: { id: a.id } });

    proxy.cut();
    await until(() => app.server.app.eventHub.size === 0);
    // Committed while the client is away: replayed after `after` = a's event on reconnection.
    const b = await book();
    proxy.restore();
    expect(await next()).toMatchObject({ data: { id: b.id } });
    await until(() => app.server.app.eventHub.size === 1);
    const c = await book();
    expect(await next()).toMatchObject({ data: { id: c.id } });
    expect(seen.map((e) => (e.data as { id: string }).id)).toEqual([a.id, b.id, c.id]);
    expect(connections).toBe(2);
    await events.return();
    await until(() => app.server.app.eventHub.size === 0);
  });

  it('a refused key (4403) is not retried: one connection attempt, the stream ends with the close', async () => {
    const client = subscriptionClient({ apiKey: 'cg_test_not-a-key' });
    let attempts = 0;
    client.on('connecting', () => attempts++);
    const ended = await Promise.race([
      client
        .events()
        .next()
        .catch((e: unknown) => e),
      new Promise((resolve) => setTimeout(() => resolve('still retrying after 3 s'), 3000)),
    ]);
    expect(ended).toBeInstanceOf(SubscriptionClosedError);
    expect(ended).toMatchObject({ code: 4403 });
    expect(attempts).toBe(1);
  });

  it('verifyWebhook verifies a real delivery under both schemes, and refuses it replayed or altered', async () => {
    const arrivals: { raw: Buffer; headers: IncomingHttpHeaders; event: WebhookEvent | Error }[] = [];
    let secret = '';
    const receiver = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const raw = Buffer.concat(chunks);
      let event: WebhookEvent | Error;
      try {
        event = verifyWebhook({ body: raw, headers: req.headers, secret, now: app.clock.now() });
      } catch (e) {
        event = e as Error;
      }
      arrivals.push({ raw, headers: req.headers, event });
      res.writeHead(event instanceof Error ? 401 : 204).end();
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    cleanup.push(() => new Promise((resolve) => receiver.close(resolve)));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    const { data, error } = await api.POST('/v1/webhooks', {
      body: { url, event_types: ['appointment.created'] },
    });
    expect(error).toBeUndefined();
    secret = data!.data.secret!;

    const booked = await book(patients[1]);
    await until(() => arrivals.length > 0, 10_000);
    const [{ raw, headers, event }] = arrivals;
    expect(event).not.toBeInstanceOf(Error);
    const delivered = event as WebhookEvent;
    // Typed by openapi.json's webhooks: the type narrows the data.
    if (delivered.type !== 'appointment.created') throw new Error(`unexpected ${delivered.type}`);
    expectTypeOf(delivered.data.start).toEqualTypeOf<string>();
    expect(delivered.data).toMatchObject({ id: booked.id, start: booked.start });

    const now = app.clock.now();
    const verify = (opts: Partial<Parameters<typeof verifyWebhook>[0]>) => {
      try {
        verifyWebhook({ body: raw, headers, secret, now, ...opts });
        return 'verified';
      } catch (e) {
        expect(e).toBeInstanceOf(WebhookVerificationError);
        return (e as Error).message;
      }
    };
    expect(verify({ scheme: 'standard' })).toBe('verified');
    expect(verify({ scheme: 'service' })).toBe('verified');
    // The body as a string, fetch's Headers, and the secret among others (the receiver's rotation).
    expect(
      verify({
        body: raw.toString('utf8'),
        headers: new Headers(headers as Record<string, string>),
        secret: [`whsec_${Buffer.alloc(32, 7).toString('base64')}`, secret],
      }),
    ).toBe('verified');
    // Replayed six minutes on: the standard timestamp is signed, so it is too old.
    expect(verify({ now: now.getTime() + 6 * 60_000 })).toContain('webhook-timestamp is too old');
    // The spec's scheme signs the body alone: the replay passes it (why auto picks the standard).
    expect(verify({ now: now.getTime() + 6 * 60_000, scheme: 'service' })).toBe('verified');
    // A fresh timestamp on the old delivery no longer matches.
    const fresh = String(Math.floor(now.getTime() / 1000) + 360);
    expect(
      verify({ headers: { ...headers, 'webhook-timestamp': fresh }, now: now.getTime() + 6 * 60_000 }),
    ).toContain('no webhook-signature entry matches');
    const altered = Buffer.from(raw.toString('utf8').replace(booked.id, 'appt_0'));
    expect(verify({ body: altered })).toContain('no webhook-signature entry matches');
    expect(verify({ body: altered, scheme: 'service' })).toContain('no X-Service-Signature entry matches');
    expect(verify({ secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}` })).toContain(
      'no webhook-signature entry matches',
    );
  });
});
