import { beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';

/** One CORS policy for /v1 and /graphql: any origin without credentials, or a configured list. */
let open: TestApp;
let listed: TestApp;
let key: string;
let listedKey: string;

beforeAll(async () => {
  open = await startTestApp();
  ({ key } = await open.clinicWithKey('dental', ['patients:read']));
  listed = await startTestApp({ corsOrigins: ['https://dashboard.example'] });
  ({ key: listedKey } = await listed.clinicWithKey('dental', ['patients:read']));
});

const preflight = (app: TestApp, path: string, origin: string) =>
  fetch(`${app.url}${path}`, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': path === '/graphql' ? 'POST' : 'GET',
      'access-control-request-headers': 'authorization, content-type',
    },
  });

describe('CORS', () => {
  it.each(['/v1/patients', '/graphql'])(
    'answers a pre-flight of %s with 204, never with credentials',
    async (path) => {
      const r = await preflight(open, path, 'https://anywhere.example');
      expect(r.status).toBe(204);
      expect(r.headers.get('access-control-allow-origin')).toBe('*');
      expect(r.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
      expect(r.headers.get('access-control-allow-methods')).toMatch(/GET/);
      // A browser dashboard's writes: every method, their retry and race headers, the ETag.
      for (const m of ['PUT', 'PATCH', 'DELETE'])
        expect(r.headers.get('access-control-allow-methods')).toContain(m);
      expect(r.headers.get('access-control-allow-headers')).toMatch(/Idempotency-Key, If-Match/);
      expect(r.headers.get('access-control-expose-headers')).toMatch(/ETag/);
      expect(r.headers.get('access-control-allow-credentials')).toBeNull();
    },
  );

  it('never echoes an arbitrary origin, and exposes the rate-limit and request-id headers', async () => {
    for (const res of [
      await fetch(`${open.url}/v1/patients`, {
        headers: { origin: 'https://evil.example', authorization: `Bearer ${key}` },
      }),
      await fetch(`${open.url}/graphql`, {
        method: 'POST',
        headers: {
          origin: 'https://evil.example',
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ query: '{ __typename }' }),
      }),
    ]) {
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
      expect(res.headers.get('access-control-expose-headers')).toMatch(/RateLimit-Remaining/);
      expect(res.headers.get('access-control-expose-headers')).toMatch(/X-Request-Id/);
    }
  });

  it('with CORS_ORIGINS, names only a listed origin (Vary: Origin) and nothing for others', async () => {
    const ok = await preflight(listed, '/v1/patients', 'https://dashboard.example');
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://dashboard.example');
    expect(ok.headers.get('vary')).toMatch(/Origin/);
    const other = await preflight(listed, '/graphql', 'https://evil.example');
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    const get = await fetch(`${listed.url}/v1/patients`, {
      headers: { origin: 'https://evil.example', authorization: `Bearer ${listedKey}` },
    });
    expect(get.headers.get('access-control-allow-origin')).toBeNull();
  });
});
