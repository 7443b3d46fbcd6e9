import type { MikroORM } from '@mikro-orm/postgresql';
import { beforeAll, describe, expect, it } from 'vitest';
import { fixtures } from './fixtures.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.ts';

/**
 * Database faults with a real PostgreSQL made unreachable (a TCP proxy the test cuts or freezes):
 * 503 service_unavailable with Retry-After on REST and GraphQL, /health alive and /ready not,
 * recovery without a restart; a database that stops answering never holds a request past its
 * deadline; a client that goes away stops its request's work.
 */
let app: TestApp & { proxy?: TcpProxy };
let proxy: TcpProxy;
let key: string;
const DEADLINE = 1500;

beforeAll(async () => {
  app = await startTestApp({
    proxy: startTcpProxy,
    limits: { requestDeadlineMs: DEADLINE, dbConnectTimeoutMs: 500, rateLimitPoints: 10_000 },
  });
  proxy = app.proxy as TcpProxy;
  let clinicId: number;
  ({ clinicId, key } = await app.clinicWithKey('dental', ['patients:read', 'appointments:read']));
  await seedPatients(app.orm, clinicId);
});

/** Patients with an appointment each. */
async function seedPatients(orm: MikroORM, clinicId: number, n = 20) {
  const f = fixtures(orm, clinicId);
  const cat = await f.catalog();
  for (let i = 0; i < n; i++) {
    const p = await f.patient({ first: `Dana${i}`, last: 'Cohen'.repeat(4), phone: `054-123-${1000 + i}` });
    await f.appointment(p, { branch: cat.branch, status: cat.status }, i * 60);
  }
}

const PAGE =
  '{ patients(first: 5) { edges { node { id appointments(first: 5) { edges { node { id } } } } } } }';

async function timed<T>(f: () => Promise<T>): Promise<[T, number]> {
  const t = performance.now();
  const r = await f();
  return [r, performance.now() - t];
}

describe('database down', () => {
  it('answers 503 service_unavailable with Retry-After on REST and GraphQL; /health 200, /ready 503; recovers by itself', async () => {
    expect((await app.get('/v1/patients', key)).status).toBe(200);
    proxy.cut();
    try {
      const rest = await app.get('/v1/patients', key);
      expect(rest.status).toBe(503);
      expect(rest.body.error).toMatchObject({ code: 'service_unavailable' });
      expect(rest.headers.get('retry-after')).toBe('5');
      const gql = await app.gql(PAGE, {}, key);
      expect(gql.status).toBe(503);
      expect(gql.body.errors[0].extensions.code).toBe('service_unavailable');
      expect(gql.headers.get('retry-after')).toBe('5');
      expect((await app.get('/health')).status).toBe(200);
      const ready = await app.get('/ready');
      expect(ready.status).toBe(503);
      expect(ready.headers.get('retry-after')).toBeTruthy();
    } finally {
      proxy.restore();
    }
    const back = await app.get('/v1/patients', key);
    expect(back.status).toBe(200);
    expect((await app.gql(PAGE, {}, key)).status).toBe(200);
    expect((await app.get('/ready')).status).toBe(200);
  });
});

describe('database frozen', () => {
  it('stops statements in PostgreSQL at the deadline too (statement_timeout on every connection)', async () => {
    const pool: any = await app.orm.em.getConnection().getNativeClient();
    const { rows } = await pool.query('show statement_timeout');
    expect(rows[0].statement_timeout).toBe(`${DEADLINE}ms`);
    await expect(pool.query(`select pg_sleep(${(DEADLINE + 500) / 1000})`)).rejects.toMatchObject({
      code: '57014',
    });
  });

  it('never holds a request past its deadline, then recovers', async () => {
    expect((await app.get('/v1/patients', key)).status).toBe(200);
    proxy.freeze();
    try {
      const [rest, ms] = await timed(() => app.get('/v1/patients?limit=2', key));
      expect([503, 504]).toContain(rest.status);
      expect(ms).toBeLessThan(DEADLINE + 1000);
      const [gql, gms] = await timed(() => app.gql(PAGE, {}, key));
      expect([503, 504]).toContain(gql.status);
      expect(gms).toBeLessThan(DEADLINE + 1000);
      const [ready, rms] = await timed(() => app.get('/ready'));
      expect(ready.status).toBe(503);
      expect(rms).toBeLessThan(3000);
    } finally {
      proxy.restore();
    }
    // Connections stuck in the freeze are discarded; fresh ones serve.
    let status = 0;
    for (let i = 0; i < 20 && status !== 200; i++) {
      status = (await app.get('/v1/patients', key)).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 250));
    }
    expect(status).toBe(200);
  });
});

describe('client that goes away', () => {
  it('stops its request’s work: no statement starts after the disconnect', async () => {
    // Keys cached and no rate limit: the operation's own statements are the only ones.
    const quiet = await startTestApp({ proxy: startTcpProxy, keyCacheTtlMs: 60_000 });
    const c = await quiet.clinicWithKey('dental', ['patients:read', 'appointments:read']);
    await seedPatients(quiet.orm, c.clinicId);
    expect((await quiet.gql(PAGE, {}, c.key)).status).toBe(200);
    const frozen = quiet.proxy as TcpProxy;
    frozen.freeze();
    const before = quiet.queries.length;
    const controller = new AbortController();
    const pending = fetch(`${quiet.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${c.key}` },
      body: JSON.stringify({ query: PAGE }),
      signal: controller.signal,
    }).catch(() => null);
    await new Promise((r) => setTimeout(r, 300));
    controller.abort();
    await pending;
    await new Promise((r) => setTimeout(r, 100));
    frozen.restore();
    // The patients statement was under way when the client left; the appointments one never starts.
    await new Promise((r) => setTimeout(r, 1000));
    const after = quiet.queries.slice(before);
    expect(after.some((q) => /from "patient"/.test(q))).toBe(true);
    expect(after.filter((q) => /from "appointment"/.test(q))).toEqual([]);
  });
});

describe('response size', () => {
  it('refuses a response over the cap before building it', async () => {
    const small = await startTestApp({ limits: { responseMaxBytes: 1000 } });
    const c = await small.clinicWithKey('dental', ['patients:read']);
    await seedPatients(small.orm, c.clinicId);
    const rest = await small.get('/v1/patients?limit=100&response_format=detailed', c.key);
    expect(rest.status, JSON.stringify(rest.body).slice(0, 200)).toBe(400);
    expect(rest.body.error.code).toBe('response_too_large');
    const gql = await small.gql(
      '{ patients(first: 100) { edges { node { id firstName lastName } } } }',
      {},
      c.key,
    );
    expect(gql.status, JSON.stringify(gql.body).slice(0, 300)).toBe(400);
    expect(gql.body.errors[0].extensions.code).toBe('response_too_large');
    expect((await small.get('/v1/patients?limit=1', c.key)).status).toBe(200);
  });
});
