import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/lib/config.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * Cost-based rate limits kept in PostgreSQL: a request spends its cost (src/schema/cost.ts) from
 * its key's budget; 429 rate_limited with Retry-After over it; failed authentications are
 * throttled per client address; two app instances on one database share the counters.
 */
let app: TestApp;
let clinicId: number;
const BUDGET = 60;

beforeAll(async () => {
  app = await startTestApp({ limits: { rateLimitPoints: BUDGET, rateLimitWindowSeconds: 2 } });
  ({ clinicId } = await app.clinicWithKey('dental', ['patients:read']));
});

const ONE_PATIENT = '/v1/patients?limit=1';
const burst = (n: number, k: string, path = ONE_PATIENT) =>
  Promise.all(Array.from({ length: n }, () => app.get(path, k)));
const spent = (r: { headers: Headers }) => BUDGET - Number(r.headers.get('ratelimit-remaining'));

describe('rate limit', () => {
  it('spends a request’s cost, announced in the RateLimit headers', async () => {
    const key = await app.key(clinicId, ['patients:read']);
    const small = await app.get(ONE_PATIENT, key);
    expect(small.status).toBe(200);
    expect(small.headers.get('ratelimit-limit')).toBe(String(BUDGET));
    expect(small.headers.get('ratelimit-policy')).toBe(`${BUDGET};w=2`);
    const one = spent(small);
    expect(one).toBeGreaterThan(1);
    // Ten times the page, about ten times the points.
    const big = await app.get('/v1/patients?limit=10', key);
    expect(big.status).toBe(200);
    const ten = spent(big) - one;
    expect(ten).toBeGreaterThan(5 * one);
  });

  it('announces the budget on every authenticated response, errors included', async () => {
    const key = await app.key(clinicId, ['patients:read']);
    for (const [path, status] of [
      ['/v1/patients/pat_999999', 404],
      ['/v1/patients?qeury=x', 422],
    ] as const) {
      const r = await app.get(path, key);
      expect(r.status, path).toBe(status);
      expect(r.headers.get('ratelimit-policy'), path).toBe(`${BUDGET};w=2`);
      expect(Number(r.headers.get('ratelimit-remaining')), path).toBeLessThan(BUDGET);
    }
    // A GraphQL document refused before execution spends one point too.
    const before = await app.get('/v1/patients?limit=1', key);
    const g = await app.gql('{ patients(first: 1) { edges { node { nope } } } }', {}, key);
    expect(g.body.errors[0].extensions.code).toBe('invalid_request');
    expect(g.headers.get('ratelimit-policy')).toBe(`${BUDGET};w=2`);
    // One point: one fewer than before, or one spent in a window that started in between.
    const left = Number(g.headers.get('ratelimit-remaining'));
    expect([Number(before.headers.get('ratelimit-remaining')) - 1, BUDGET - 1]).toContain(left);
  });

  it('answers 429 rate_limited with Retry-After once the budget is spent', async () => {
    const key = await app.key(clinicId, ['patients:read']);
    const results = await burst(40, key);
    const ok = results.filter((r) => r.status === 200);
    const limited = results.filter((r) => r.status === 429);
    expect(ok.length).toBeGreaterThan(0);
    expect(limited.length).toBeGreaterThan(0);
    expect(ok.length + limited.length).toBe(40);
    const r = limited[0];
    expect(r.body.error).toMatchObject({ code: 'rate_limited', request_id: r.headers.get('x-request-id') });
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(r.headers.get('ratelimit-remaining')).toBe('0');
  });

  it('refuses a single request that costs more than the whole budget', async () => {
    const key = await app.key(clinicId, ['patients:read']);
    const r = await app.get('/v1/patients?limit=100', key);
    expect(r.status).toBe(429);
    expect(r.body.error.message).toMatch(/costs \d+ points, more than this API key's budget of 60/);
  });

  it('counts GraphQL by cost against the same key, with HTTP 429', async () => {
    const other = await app.key(clinicId, ['patients:read']);
    const first = await app.gql('{ patients(first: 1) { edges { node { id } } } }', {}, other);
    expect(first.status).toBe(200);
    const cheap = spent(first);
    const second = await app.gql('{ patients(first: 20) { edges { node { id } } } }', {}, other);
    expect(spent(second) - cheap).toBeGreaterThanOrEqual(20);
    const results = await Promise.all(
      Array.from({ length: 10 }, () => app.gql('{ patients(first: 10) { edges { cursor } } }', {}, other)),
    );
    const limited = results.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    expect(limited[0].body.errors[0].extensions.code).toBe('rate_limited');
    expect(limited[0].body.errors[0].extensions.http).toBeUndefined();
    expect(Number(limited[0].headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited[0].headers.get('ratelimit-remaining')).toBe('0');
    expect(limited[0].headers.get('x-request-id')).toBe(limited[0].body.errors[0].extensions.request_id);
  });

  it('limits each key on its own and lets it in again after the window', async () => {
    const a = await app.key(clinicId, ['patients:read']);
    const b = await app.key(clinicId, ['patients:read']);
    expect((await burst(40, a)).some((r) => r.status === 429)).toBe(true);
    expect((await app.get(ONE_PATIENT, b)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2100));
    expect((await app.get(ONE_PATIENT, a)).status).toBe(200);
  });

  it('keeps the counters in PostgreSQL, shared by every instance on the database', async () => {
    const key = await app.key(clinicId, ['patients:read']);
    await app.get(ONE_PATIENT, key);
    const { rows } = await app.orm.em
      .getConnection()
      .getNativeClient()
      .then((pool: any) => pool.query(`select key, points from rate_limit where key like 'key:%'`));
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r: { points: number }) => r.points > 0)).toBe(true);
  });

  it('refuses a bad key with 401 before counting anything', async () => {
    const results = await burst(10, 'cg_live_nope');
    expect(results.every((r) => r.status === 401)).toBe(true);
  });
});

describe('failed authentication', () => {
  let strict: TestApp;
  beforeAll(async () => {
    strict = await startTestApp({ limits: { authFailuresPerMinute: 5 } });
  });

  it('throttles an address after a few failures; a valid key from the same address is still served', async () => {
    const { key } = await strict.clinicWithKey('dental', ['patients:read']);
    for (let i = 0; i < 5; i++) expect((await strict.get(ONE_PATIENT, `cg_live_guess${i}`)).status).toBe(401);
    const r = await strict.get(ONE_PATIENT, 'cg_live_guess_again');
    expect(r.status).toBe(429);
    expect(r.body.error.code).toBe('rate_limited');
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const g = await strict.gql('{ patients(first: 1) { edges { cursor } } }', {}, 'cg_live_nope');
    expect(g.status).toBe(429);
    expect((await strict.get(ONE_PATIENT, null)).status).toBe(429);
    // The throttle is for what fails: behind one proxy or NAT, other clients' valid keys work.
    expect((await strict.get(ONE_PATIENT, key)).status).toBe(200);
    expect((await strict.gql('{ patients(first: 1) { edges { cursor } } }', {}, key)).status).toBe(200);
    // And bad keys from the address are still refused after the valid one.
    expect((await strict.get(ONE_PATIENT, 'cg_live_guess_more')).status).toBe(429);
  });
});

describe('behind a trusted proxy (TRUST_PROXY)', () => {
  const forwarded = (app: TestApp, k: string, from: string) =>
    fetch(`${app.url}${ONE_PATIENT}`, { headers: { authorization: `Bearer ${k}`, 'x-forwarded-for': from } });

  it('throttles the client X-Forwarded-For names, each on its own', async () => {
    const proxied = await startTestApp({ limits: { authFailuresPerMinute: 3 }, trustProxy: '127.0.0.1/8' });
    for (let i = 0; i < 3; i++)
      expect((await forwarded(proxied, 'cg_live_bad', '203.0.113.7')).status).toBe(401);
    expect((await forwarded(proxied, 'cg_live_bad', '203.0.113.7')).status).toBe(429);
    // Another client behind the same proxy is not throttled by the first one's failures.
    expect((await forwarded(proxied, 'cg_live_bad', '203.0.113.8')).status).toBe(401);
  });

  it('takes a hop count; and without TRUST_PROXY, X-Forwarded-For is not believed', async () => {
    const hops = await startTestApp({ limits: { authFailuresPerMinute: 2 }, trustProxy: '1' });
    // One trusted hop: the client is the last address the proxy appended, not a spoofed first one.
    for (let i = 0; i < 2; i++) await forwarded(hops, 'cg_live_bad', `10.9.9.${i}, 198.51.100.1`);
    expect((await forwarded(hops, 'cg_live_bad', '10.9.9.9, 198.51.100.1')).status).toBe(429);
    expect((await forwarded(hops, 'cg_live_bad', '198.51.100.2')).status).toBe(401);
    const direct = await startTestApp({ limits: { authFailuresPerMinute: 2 } });
    for (let i = 0; i < 2; i++) await forwarded(direct, 'cg_live_bad', `198.51.100.${i}`);
    // Every request came from 127.0.0.1, whatever the header said.
    expect((await forwarded(direct, 'cg_live_bad', '198.51.100.9')).status).toBe(429);
  });

  it('refuses a TRUST_PROXY it cannot read at start-up', () => {
    expect(() => loadConfig({ TRUST_PROXY: 'not-an-address' })).toThrow(/TRUST_PROXY/);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, loopback' }).TRUST_PROXY).toBe('10.0.0.0/8, loopback');
  });
});

describe('a refused request', () => {
  it('is held for rateLimitedDelayMs before its 429, so a tight retry loop costs a timer', async () => {
    // A budget for one list request (it costs 6), not two.
    const slow = await startTestApp({ limits: { rateLimitPoints: 10, rateLimitedDelayMs: 300 } });
    const { key } = await slow.clinicWithKey('dental', ['patients:read']);
    await slow.get('/v1/patients?limit=1', key);
    const started = performance.now();
    const r = await slow.get('/v1/patients?limit=1', key);
    expect(r.status).toBe(429);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
  });
});
