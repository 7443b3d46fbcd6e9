import pg from 'pg';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { readScopes } from '../src/auth/scopes.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/** HEAD on every GET route, and headers that keep clinical data out of caches and sniffers. */
let app: TestApp;
let key: string;

beforeAll(async () => {
  app = await startTestApp();
  key = (await app.clinicWithKey('dental', readScopes)).key;
});

const auth = () => ({ authorization: `Bearer ${key}` });

describe('HTTP', () => {
  it('HEAD answers a GET route like GET, without a body', async () => {
    for (const path of ['/v1/patients?limit=1', '/v1/catalog/branches']) {
      const get = await fetch(`${app.url}${path}`, { headers: auth() });
      const head = await fetch(`${app.url}${path}`, { method: 'HEAD', headers: auth() });
      expect(head.status, path).toBe(200);
      expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
      expect(await head.text()).toBe('');
    }
    expect((await fetch(`${app.url}/v1/patients`, { method: 'HEAD' })).status).toBe(401);
  });

  it('API responses are no-store and nosniff, REST, GraphQL and errors alike', async () => {
    const responses = [
      await fetch(`${app.url}/v1/patients`, { headers: auth() }),
      await fetch(`${app.url}/v1/patients/pat_999999`, { headers: auth() }),
      await fetch(`${app.url}/graphql`, {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ patients(first: 1) { edges { node { id } } } }' }),
      }),
      await fetch(`${app.url}/v1/nowhere`),
    ];
    for (const r of responses) {
      expect(r.headers.get('cache-control'), r.url).toBe('no-store');
      expect(r.headers.get('x-content-type-options'), r.url).toBe('nosniff');
    }
  });
});

describe('/health and /ready', () => {
  it('/ready says whether the database answers with every migration applied; /health only that the process lives', async () => {
    const other = await startTestApp();
    expect((await fetch(`${other.url}/ready`)).status).toBe(200);
    // The database goes away under the running app.
    const name = new URL(other.orm.config.get('clientUrl') as string).pathname.slice(1);
    const admin = new pg.Client({ connectionString: inject('adminUrl') });
    await admin.connect();
    await admin.query(`drop database "${name}" with (force)`);
    await admin.end();
    const down = await fetch(`${other.url}/ready`);
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toBe('5');
    expect(await down.json()).toEqual({ status: 'unavailable', reason: 'database unreachable' });
    expect((await fetch(`${other.url}/health`)).status).toBe(200);
  });
});
