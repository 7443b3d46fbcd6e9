import { createServer, METHODS, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRateLimiter } from '../src/auth/rate-limit.ts';
import { QUEUE_SCHEMA } from '../src/lib/job-queue.ts';
import { defaultLimits } from '../src/lib/limits.ts';
import { createMetricsRoute, methodLabel } from '../src/server/metrics-route.ts';
import { SEND_QUEUE } from '../src/services/chat/send-jobs.ts';
import { DELIVERY_QUEUE } from '../src/services/webhooks/delivery-jobs.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { type Family, parsePrometheusText } from './prometheus-text.ts';
import { type Receiver, startReceiver } from './webhook-receiver.ts';

/**
 * The scrape-time reads of /metrics past their caps (docs/metrics.md), with the caps lowered
 * through the route's options instead of 100,000 rows: each queue's depth is counted under its
 * own cap (a webhook backlog never hides the chat sends), and the outbox lag reads the oldest
 * delivery attempts, not whichever rows the table returns first.
 */
const TOKEN = 'metrics-token-for-the-bounds';
const CAP = 3;
let app: TestApp;
let key: string;
let receiver: Receiver;
let server: Server;
let url: string;

beforeAll(async () => {
  // No workers: every job stays queued where the test put it.
  app = await startTestApp({ workers: false, metricsToken: TOKEN });
  key = (await app.clinicWithKey('dental', ['webhooks:manage', 'patients:write'])).key;
  receiver = await startReceiver();
  const sub = await app.post('/v1/webhooks', { url: receiver.url, event_types: ['patient.created'] }, key);
  expect(sub.status, JSON.stringify(sub.body)).toBe(201);
  const route = createMetricsRoute({
    token: TOKEN,
    em: app.orm.em,
    clock: app.clock,
    maxCountedJobs: CAP,
    maxLagJobs: CAP,
    rateLimiter: createRateLimiter(null, defaultLimits),
  });
  server = createServer(
    (req, res) =>
      void route(req, res, {
        requestId: 'req_test',
        clientAddress: '127.0.0.1',
        setHeader: (name, value) => res.setHeader(name, value),
      }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await receiver?.close();
});

async function scrape(): Promise<Map<string, Family>> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  return parsePrometheusText(await res.text());
}

const sampleValue = (families: Map<string, Family>, name: string, labels: Record<string, string> = {}) =>
  families.get(name)?.samples.find((m) => Object.entries(labels).every(([k, v]) => m.labels[k] === v))?.value;

/** Sends `method` to `path` of the app as Node's client sends it (fetch refuses CONNECT, TRACE, TRACK). */
const raw = (method: string, path: string) =>
  new Promise<void>((resolve) => {
    const req = request(`${app.url}${path}`, { method }, (res) => {
      res.resume();
      res.on('end', resolve);
      res.on('error', () => resolve());
    });
    // CONNECT is refused by closing the socket: no answer, nothing counted.
    req.on('error', () => resolve());
    req.end();
  });

const sql = (text: string, params: unknown[] = []) => app.orm.em.getConnection().execute(text, params);

const newPatient = async () => {
  const r = await app.post('/v1/patients', { first_name: 'Bound', last_name: 'B' }, key);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
};

describe('scrape-time reads past their caps', () => {
  it('counts each queue and state under its own cap, so a backlog on one hides no other', async () => {
    // A webhook backlog over the cap, then two chat sends after it in the table.
    for (let i = 0; i < CAP + 4; i++) await newPatient();
    for (let i = 0; i < 2; i++)
      await app.server.jobs.queue.boss.insert(SEND_QUEUE, [
        { data: { message: `out_${i}` }, startAfter: 3600 },
      ]);
    const families = await scrape();
    expect(sampleValue(families, 'job_queue_depth', { queue: DELIVERY_QUEUE, state: 'created' })).toBe(CAP);
    expect(sampleValue(families, 'job_queue_depth', { queue: SEND_QUEUE, state: 'created' })).toBe(2);
    expect(sampleValue(families, 'job_queue_depth', { queue: SEND_QUEUE, state: 'active' })).toBe(0);
  });

  it('reads the oldest delivery attempts for the outbox lag, whatever order the table holds them in', async () => {
    await sql(`delete from "${QUEUE_SCHEMA}"."job" where "name" = ?`, [DELIVERY_QUEUE]);
    // The oldest event first; its delivery failed once (pg-boss rewrote its row: the new version
    // lies after the others in the table), and more events an hour later, past the cap.
    await newPatient();
    app.clock.advance(3_600_000);
    for (let i = 0; i < CAP + 4; i++) await newPatient();
    const updated = await sql(
      `update "${QUEUE_SCHEMA}"."job" set "state" = 'retry', "retry_count" = 1 where "id" = (select "id" from "${QUEUE_SCHEMA}"."job" where "name" = ? order by "created_on" limit 1) returning "id"`,
      [DELIVERY_QUEUE],
    );
    expect(updated).toHaveLength(1);
    expect(sampleValue(await scrape(), 'outbox_lag_seconds')).toBeGreaterThanOrEqual(3600);
  });
});

describe('request labels', () => {
  it('labels a method no route answers `other`: every method Node parses, on every kind of route, makes a bounded set of series', async () => {
    const paths = [
      '/',
      '/health',
      '/graphql',
      '/inbox',
      '/webhooks',
      '/v1/patients',
      '/v1/patients/pat_1',
      '/v1/nowhere',
      '/nowhere',
    ];
    const answered = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
    const series = async () => {
      const res = await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(res.status).toBe(200);
      const family = parsePrometheusText(await res.text()).get('http_request_duration_seconds');
      return (family?.samples ?? []).filter((s) => s.name === 'http_request_duration_seconds_count');
    };
    expect(METHODS.length).toBeGreaterThan(30);
    await series(); // the scrape's own series, counted once it is answered
    for (const method of METHODS) for (const path of paths) await raw(method, path);
    const before = await series();
    const methods = new Set(before.map((s) => s.labels.method));
    expect([...methods].filter((m) => !answered.includes(m) && m !== 'other')).toEqual([]);
    expect(methods).toContain('other');
    expect(methodLabel('PROPFIND')).toBe('other');
    // At most one series per answered method and `other` for each route and status.
    const perRouteStatus = new Map<string, Set<string>>();
    for (const s of before) {
      const k = `${s.labels.route} ${s.labels.operation} ${s.labels.status}`;
      perRouteStatus.set(k, (perRouteStatus.get(k) ?? new Set()).add(s.labels.method));
    }
    for (const [k, m] of perRouteStatus) expect(m.size, k).toBeLessThanOrEqual(answered.length + 1);
    // The same methods again, on new paths of the same routes: no new series.
    for (const method of METHODS)
      for (const path of ['/v1/patients/pat_2', '/elsewhere']) await raw(method, path);
    expect((await series()).length).toBe(before.length);
  });
});
