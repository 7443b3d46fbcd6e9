import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logger } from '../src/lib/logger.ts';
import { syncTemplates } from '../src/services/chat/template-sync.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { type Family, parsePrometheusText } from './prometheus-text.ts';
import { type Receiver, startReceiver } from './webhook-receiver.ts';
import { connect, type TestSocket } from './ws-client.ts';

/**
 * GET /metrics (docs/metrics.md) read by a strict Prometheus text parser (test/prometheus-text.ts), and
 * each series moving when its cause happens: a request (by route pattern and GraphQL operation
 * type), a 429, a delivery attempt, a chat send, a websocket and its subscription; the scrape-time
 * figures (pool, queue depth, outbox lag) read from the database. And the request id a client saw
 * in the log lines of the jobs its request queued, and of its websocket operations.
 */
const TOKEN = 'metrics-token-for-the-test';
let app: TestApp;
let key: string;
let chatWrite: string;
let costly: string;
let receiver: Receiver;
let n = 0;
const sockets: TestSocket[] = [];

beforeAll(async () => {
  // A budget of 50 points: a page of 100 patients (about 100 points) is refused with 429.
  app = await startTestApp({
    metricsToken: TOKEN,
    limits: { rateLimitPoints: 50, rateLimitWindowSeconds: 60 },
  });
  const c = await app.clinicWithKey('dental', ['webhooks:manage', 'patients:write', 'patients:read']);
  key = c.key;
  chatWrite = await app.key(c.clinicId, ['chat:write']);
  costly = await app.key(c.clinicId, ['patients:read']);
  await syncTemplates(app.orm.em.fork(), c.clinicId, app.server.network);
  receiver = await startReceiver();
  const sub = await app.post('/v1/webhooks', { url: receiver.url, event_types: ['patient.created'] }, key);
  expect(sub.status, JSON.stringify(sub.body)).toBe(201);
  receiver.secret = sub.body.data.secret;
});
afterAll(async () => {
  await Promise.all(sockets.map((s) => s.dispose()));
  await receiver?.close();
});

type Families = Map<string, Family>;

async function scrape(): Promise<Families> {
  const res = await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(await res.text());
}

/** A series' value (a histogram's count), summed over the series whose labels match `labels`; 0 when none. */
function sampleOf(families: Families, name: string, labels: Record<string, string> = {}): number {
  const family = families.get(name);
  if (!family) return 0;
  const sampleName = family.type === 'histogram' ? `${name}_count` : name;
  let total = 0;
  for (const m of family.samples) {
    if (m.name !== sampleName || !Object.entries(labels).every(([k, v]) => m.labels[k] === v)) continue;
    total += m.value;
  }
  return total;
}

/** How much `work` moves each of `series`. */
async function moves(series: [string, Record<string, string>?][], work: () => Promise<void>) {
  const before = await scrape();
  await work();
  const after = await scrape();
  return series.map(([name, labels]) => sampleOf(after, name, labels) - sampleOf(before, name, labels));
}

/** Resolves once `check` answers true (fails after `ms`). */
async function eventually(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Every log line written while `work` runs (given the lines so far, as written), parsed. */
async function logLinesOf(work: (written: string[]) => Promise<void>): Promise<Record<string, any>[]> {
  const stream = (logger as any)[pino.symbols.streamSym];
  const write = stream.write;
  const level = logger.level;
  const lines: string[] = [];
  stream.write = (line: string) => lines.push(line) > 0;
  logger.level = 'info';
  try {
    await work(lines);
  } finally {
    stream.write = write;
    logger.level = level;
  }
  return lines.map((l) => JSON.parse(l));
}

const newPatient = () => app.post('/v1/patients', { first_name: 'Metric', last_name: `M${++n}` }, key);

describe('without METRICS_TOKEN', () => {
  let plain: TestApp;
  beforeAll(async () => {
    plain = await startTestApp();
  });
  it('/metrics is the 404 of any unknown path', async () => {
    const r = await plain.get('/metrics', TOKEN);
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('not_found');
  });
});

describe('a wrong METRICS_TOKEN', () => {
  let strict: TestApp;
  beforeAll(async () => {
    strict = await startTestApp({ metricsToken: TOKEN, limits: { authFailuresPerMinute: 3 } });
  });
  it('is throttled as a wrong API key is: 429 past the failed-authentication budget', async () => {
    for (let i = 0; i < 3; i++) expect((await strict.get('/metrics', `guess-${i}`)).status).toBe(401);
    const r = await strict.get('/metrics', 'guess-again');
    expect(r.status).toBe(429);
    expect(r.body.error.code).toBe('rate_limited');
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // The budget is the address's, shared with the API: its wrong keys are refused too.
    expect((await strict.get('/v1/patients', 'cg_live_nope')).status).toBe(429);
    // The scraper's own token is still served.
    expect((await strict.get('/metrics', TOKEN)).status).toBe(200);
  });
});

describe('GET /metrics', () => {
  it('takes the METRICS_TOKEN as a Bearer token, and nothing else', async () => {
    expect((await fetch(`${app.url}/metrics`)).status).toBe(401);
    expect((await app.get('/metrics', 'not-the-token')).status).toBe(401);
    // An API key is no way in: the figures are every clinic's.
    expect((await app.get('/metrics', key)).status).toBe(401);
    const families = await scrape();
    expect(families.get('http_request_duration_seconds')?.type).toBe('histogram');
    // The pool as the scrape found it: its own reads do not show as waiting (nothing else runs now).
    expect(sampleOf(families, 'db_pool_waiting')).toBe(0);
    expect(sampleOf(families, 'db_pool_connections')).toBeGreaterThanOrEqual(1);
    for (const name of [
      'http_request_duration_seconds',
      'db_pool_connections',
      'db_pool_waiting',
      'process_cpu_user_seconds_total',
    ])
      expect([...families.keys()]).toContain(name);
  });

  it('counts a request by its route pattern (never the raw path), method and status, with its duration', async () => {
    const id = (await newPatient()).body.data.id;
    const [byPattern, rawPath] = await moves(
      [
        [
          'http_request_duration_seconds',
          { route: '/v1/patients/:id', method: 'GET', status: '200', operation: '' },
        ],
        ['http_request_duration_seconds', { route: `/v1/patients/${id}` }],
      ],
      async () => {
        expect((await app.get(`/v1/patients/${id}`, key)).status).toBe(200);
        expect((await app.get(`/v1/patients/${id}`, key)).status).toBe(200);
      },
    );
    expect(byPattern).toBe(2);
    expect(rawPath).toBe(0);
    // Random paths make no new series: they are all `other`.
    const [other] = await moves(
      [['http_request_duration_seconds', { route: 'other', status: '404' }]],
      async () => {
        await app.get(`/nothing-here-${Math.random()}`);
      },
    );
    expect(other).toBe(1);
    // The pages and their hashed files have labels of their own, apart from the 404s.
    const inbox = await (await fetch(`${app.url}/inbox`)).text();
    const asset = /src="(\/inbox\/assets\/[^"]+)"/.exec(inbox)?.[1];
    const portal = await (await fetch(`${app.url}/webhooks`)).text();
    const portalAsset = /src="(\/webhooks\/assets\/[^"]+)"/.exec(portal)?.[1];
    const [pages, assets, portalPages, portalAssets, docs, others] = await moves(
      [
        ['http_request_duration_seconds', { route: '/errors', status: '200' }],
        ['http_request_duration_seconds', { route: '/inbox/assets/:file', status: '200' }],
        ['http_request_duration_seconds', { route: '/webhooks', status: '200' }],
        ['http_request_duration_seconds', { route: '/webhooks/assets/:file', status: '200' }],
        ['http_request_duration_seconds', { route: '/docs/:name', status: '200' }],
        ['http_request_duration_seconds', { route: 'other' }],
      ],
      async () => {
        for (const path of ['/errors', '/inbox', '/inbox/', asset, '/webhooks', portalAsset, '/docs/events'])
          expect((await fetch(`${app.url}${path}`)).status, path).toBe(200);
      },
    );
    expect([pages, assets, portalPages, portalAssets, docs, others]).toEqual([1, 1, 1, 1, 1, 0]);
  });

  it('counts a GraphQL request by operation type, and the cost it spent', async () => {
    const [queries, mutations, cost] = await moves(
      [
        ['http_request_duration_seconds', { route: '/graphql', operation: 'query', status: '200' }],
        ['http_request_duration_seconds', { route: '/graphql', operation: 'mutation' }],
        ['graphql_cost_points_total', { face: 'graphql' }],
      ],
      async () => {
        const r = await app.gql('{ patients(first: 5) { edges { node { id } } } }', {}, key);
        expect(r.body.errors).toBeUndefined();
      },
    );
    expect(queries).toBe(1);
    expect(mutations).toBe(0);
    expect(cost).toBeGreaterThanOrEqual(5);
  });

  it('counts a 429 as a rate-limit refusal', async () => {
    const [refusals, tooMany] = await moves(
      [
        ['rate_limit_refusals_total', { limit: 'key' }],
        ['http_request_duration_seconds', { route: '/v1/patients', status: '429' }],
      ],
      async () => {
        expect((await app.get('/v1/patients?limit=100', costly)).status).toBe(429);
      },
    );
    expect(refusals).toBe(1);
    expect(tooMany).toBe(1);
  });

  it('counts a delivery attempt by outcome; its log line carries the id of the request that queued it', async () => {
    let requestId = '';
    let succeeded = 0;
    // The deliveries of the patients created so far (one each) are counted first.
    await eventually(
      async () => sampleOf(await scrape(), 'webhook_delivery_attempts_total', { outcome: 'succeeded' }) >= n,
    );
    const lines = await logLinesOf(async (written) => {
      [succeeded] = await moves([['webhook_delivery_attempts_total', { outcome: 'succeeded' }]], async () => {
        const p = await newPatient();
        requestId = p.headers.get('x-request-id') as string;
        await receiver.waitFor(n);
        await eventually(() => written.some((l) => l.includes('"webhook delivery attempt"')));
      });
    });
    expect(succeeded).toBe(1);
    const attempt = lines.find((l) => l.msg === 'webhook delivery attempt');
    expect(attempt).toMatchObject({ request_id: requestId, outcome: 'succeeded', status: 204, attempt: 1 });
    expect(requestId).toMatch(/^req_/);
  });

  it('counts a chat send by outcome; its log line carries the id of the request that queued it', async () => {
    let requestId = '';
    let sent = 0;
    const lines = await logLinesOf(async () => {
      [sent] = await moves([['chat_sends_total', { outcome: 'sent' }]], async () => {
        const r = await app.post('/v1/chat/messages', { to: '+972502223344', text: 'Hello' }, chatWrite);
        expect(r.status, JSON.stringify(r.body)).toBe(202);
        requestId = r.headers.get('x-request-id') as string;
        await app.settle();
      });
    });
    expect(sent).toBe(1);
    expect(lines.find((l) => l.msg === 'chat send attempt')).toMatchObject({
      request_id: requestId,
      outcome: 'sent',
    });
    // The sandbox network's receipts for it are jobs too (src/network/sandbox-receipts.ts): each
    // carries the id, added by the shared enqueue.
    const receipts = await app.orm.em
      .getConnection()
      .execute<{ request_id: string | null }[]>(
        `select "data"->>'requestId' as "request_id" from "pgboss"."job" where "name" = 'sandbox-receipts'`,
      );
    expect(receipts.length).toBeGreaterThanOrEqual(3);
    expect(new Set(receipts.map((r) => r.request_id))).toEqual(new Set([requestId]));
  });

  it('counts open websockets and subscriptions; each websocket operation writes a line like a request', async () => {
    const before = await scrape();
    const socket = connect(app.url, { Authorization: `Bearer ${key}` });
    sockets.push(socket);
    await socket.connected;
    const sub = socket.subscribe('subscription Created { events(types: [PATIENT_CREATED]) { id } }');
    await eventually(
      async () =>
        sampleOf(await scrape(), 'graphql_subscriptions') > sampleOf(before, 'graphql_subscriptions'),
    );
    const open = await scrape();
    expect(sampleOf(open, 'websocket_connections') - sampleOf(before, 'websocket_connections')).toBe(1);
    expect(sampleOf(open, 'graphql_subscriptions') - sampleOf(before, 'graphql_subscriptions')).toBe(1);
    const lines = await logLinesOf(async (written) => {
      await newPatient();
      await sub.waitFor(1);
      await socket.dispose();
      await eventually(() => written.some((l) => l.includes('"websocket operation"')));
    });
    const line = lines.find((l) => l.msg === 'websocket operation');
    expect(line).toMatchObject({
      transport: 'websocket',
      operation_type: 'subscription',
      operation_name: 'Created',
      outcome: 'ok',
    });
    expect(line?.request_id).toMatch(/^req_/);
    expect(line?.duration_ms).toBeGreaterThan(0);
    await eventually(
      async () =>
        sampleOf(await scrape(), 'websocket_connections') === sampleOf(before, 'websocket_connections'),
    );
    const closed = await scrape();
    expect(sampleOf(closed, 'graphql_subscriptions')).toBe(sampleOf(before, 'graphql_subscriptions'));
    expect(
      sampleOf(closed, 'graphql_ws_operations_total', { operation: 'subscription', outcome: 'ok' }) -
        sampleOf(before, 'graphql_ws_operations_total', { operation: 'subscription', outcome: 'ok' }),
    ).toBe(1);
  });

  it('shows the outbox lag and the queue depth while a delivery waits to be retried', async () => {
    receiver.mode.status = 500;
    try {
      const p = await newPatient();
      expect(p.status).toBe(201);
      // The failed first attempt queues the next one (held back by the schedule's delay).
      await eventually(
        async () => sampleOf(await scrape(), 'job_queue_depth', { queue: 'webhook-delivery' }) >= 1,
      );
      app.clock.advance(120_000);
      const families = await scrape();
      expect(sampleOf(families, 'outbox_lag_seconds')).toBeGreaterThanOrEqual(120);
    } finally {
      receiver.mode.status = undefined;
    }
  });
});
