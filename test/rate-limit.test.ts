import { beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';

/** Requests per second per API key: 429 rate_limited with Retry-After, other keys unaffected. */
let app: TestApp;
let clinicId: number;
let key: string;
const PER_SECOND = 3;

beforeAll(async () => {
  app = await startTestApp({ rateLimitPerSecond: PER_SECOND });
  ({ clinicId, key } = await app.clinicWithKey('dental', ['patients:read']));
});

/** Fires n requests at once; at most 2 × the limit can pass even if they straddle a window. */
const burst = (n: number, k: string) =>
  Promise.all(Array.from({ length: n }, () => app.get('/v1/patients', k)));

describe('rate limit', () => {
  it('answers 429 rate_limited with Retry-After and RateLimit headers over the limit', async () => {
    const results = await burst(10, key);
    const ok = results.filter((r) => r.status === 200);
    const limited = results.filter((r) => r.status === 429);
    expect(ok.length).toBeGreaterThan(0);
    expect(ok.length).toBeLessThanOrEqual(2 * PER_SECOND);
    expect(limited.length).toBe(10 - ok.length);
    expect(ok[0].headers.get('ratelimit-limit')).toBe(String(PER_SECOND));
    expect(Number(ok[0].headers.get('ratelimit-remaining'))).toBeLessThan(PER_SECOND);
    const r = limited[0];
    expect(r.body.error).toMatchObject({ code: 'rate_limited', request_id: r.headers.get('x-request-id') });
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(r.headers.get('ratelimit-remaining')).toBe('0');
  });

  it('counts GraphQL against the same key, with HTTP 429', async () => {
    const other = await app.key(clinicId, ['patients:read']);
    const results = await Promise.all(
      Array.from({ length: 10 }, () => app.gql('{ patients(first: 1) { edges { cursor } } }', {}, other)),
    );
    const limited = results.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThanOrEqual(10 - 2 * PER_SECOND);
    expect(limited[0].body.errors[0].extensions.code).toBe('rate_limited');
    expect(limited[0].body.errors[0].extensions.http).toBeUndefined();
    // The headers set during authentication survive the direct /graphql path's answer.
    expect(Number(limited[0].headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited[0].headers.get('ratelimit-remaining')).toBe('0');
    expect(limited[0].headers.get('x-request-id')).toBe(limited[0].body.errors[0].extensions.request_id);
  });

  it('limits each key on its own and lets it in again after the window', async () => {
    const a = await app.key(clinicId, ['patients:read']);
    const b = await app.key(clinicId, ['patients:read']);
    expect((await burst(10, a)).some((r) => r.status === 429)).toBe(true);
    expect((await app.get('/v1/patients', b)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await app.get('/v1/patients', a)).status).toBe(200);
  });

  it('refuses a bad key with 401 before counting anything', async () => {
    const results = await burst(10, 'cg_live_nope');
    expect(results.every((r) => r.status === 401)).toBe(true);
  });
});
