import { beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, revokeApiKey } from '../src/auth/keys.ts';
import { allScopes, readScopes } from '../src/auth/scopes.ts';
import { ApiKey } from '../src/entities/index.ts';
import { startTestApp, type TestApp } from './helpers.ts';

let app: TestApp;
let clinicId: number;
let fullKey: string;

beforeAll(async () => {
  app = await startTestApp();
  const c = await app.clinicWithKey('veterinary', readScopes);
  clinicId = c.clinicId;
  fullKey = c.key;
});

const raw = (path: string, headers: Record<string, string>) =>
  fetch(`${app.url}${path}`, { headers }).then(async (r) => ({ status: r.status, body: await r.json() }));

describe('API keys', () => {
  it('are high-entropy, shown once and stored only as a hash', async () => {
    const made = await createApiKey(app.orm.em.fork(), { clinicId, name: 'k', scopes: ['patients:read'] });
    expect(made.key).toMatch(/^cg_test_[A-Za-z0-9_-]{43}$/);
    const row = await app.orm.em.fork().findOneOrFail(ApiKey, { id: Number(made.id.slice(4)) });
    expect(row.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain(made.key);
    expect(made.key.startsWith(row.prefix)).toBe(true);
  });

  it('refuse chat:read together with chat:write, and unknown scopes', async () => {
    await expect(
      createApiKey(app.orm.em.fork(), { clinicId, name: 'k', scopes: ['chat:read', 'chat:write'] }),
    ).rejects.toThrow(/cannot be granted on the same key/);
    await expect(
      createApiKey(app.orm.em.fork(), { clinicId, name: 'k', scopes: ['patients:delete'] }),
    ).rejects.toThrow(/Unknown scope/);
  });
});

describe('REST authentication', () => {
  it.each([
    ['missing', {}],
    ['not bearer', { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }],
    ['malformed', { authorization: 'Bearer' }],
    ['unknown', { authorization: 'Bearer cg_live_nope' }],
  ])('401 for a %s key', async (_name, headers) => {
    const r = await raw('/v1/patients', headers as Record<string, string>);
    expect(r.status).toBe(401);
    expect(r.body.error).toMatchObject({
      code: 'unauthenticated',
      message: expect.any(String),
      request_id: expect.stringMatching(/^req_/),
    });
  });

  it('401 comes before any parameter error', async () => {
    for (const path of ['/v1/patients?email=a&email=b', '/v1/patients?limit=0', '/v1/patients/nope']) {
      const r = await raw(path, {});
      expect(r.status, path).toBe(401);
      expect(r.body.error.code, path).toBe('unauthenticated');
    }
  });

  it('401 once a key is revoked', async () => {
    const made = await createApiKey(app.orm.em.fork(), {
      clinicId,
      name: 'soon revoked',
      scopes: ['patients:read'],
    });
    expect((await app.get('/v1/patients', made.key)).status).toBe(200);
    await revokeApiKey(app.orm.em.fork(), made.id);
    const r = await app.get('/v1/patients', made.key);
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe('unauthenticated');
  });

  it.each([
    ['/v1/patients', 'catalog:read', ['patients:read']],
    ['/v1/patients/pat_1', 'catalog:read', ['patients:read']],
    ['/v1/patients/pat_1/appointments', 'patients:read', ['appointments:read']],
    ['/v1/patients/pat_1/treatments', 'patients:read', ['treatments:read']],
    ['/v1/patients/pat_1/payments', 'patients:read', ['payments:read']],
    ['/v1/catalog/branches', 'patients:read', ['catalog:read']],
    ['/v1/catalog/vaccines', 'catalog:read', ['vaccines:read']],
    ['/v1/catalog/measurements', 'catalog:read', ['measurements:read']],
  ])('403 on %s for a key with only %s', async (path, scope, missing) => {
    const k = await app.key(clinicId, [scope]);
    const r = await app.get(path, k);
    expect(r.status).toBe(403);
    expect(r.body.error).toMatchObject({ code: 'forbidden', required_scopes: missing });
  });

  it('403 lists every scope the key lacks, and comes before any 404', async () => {
    const k = await app.key(clinicId, ['chat:write']);
    const r = await app.get('/v1/patients/pat_999999/payments', k);
    expect(r.status).toBe(403);
    expect(r.body.error.required_scopes).toEqual(['patients:read', 'payments:read']);
  });

  it('a key with every scope reaches every route', async () => {
    const k = await app.key(
      clinicId,
      allScopes.filter((s) => s !== 'chat:write'),
    );
    expect((await app.get('/v1/catalog/vaccines', k)).status).toBe(200);
    expect((await app.get('/v1/catalog/measurements', fullKey)).status).toBe(200);
  });
});

describe('GraphQL authentication', () => {
  const q = '{ patients(first: 1) { edges { node { id } } } }';

  it('401 with extensions.code unauthenticated without a valid key', async () => {
    for (const k of [null, 'cg_live_nope']) {
      const r = await app.gql(q, {}, k);
      expect(r.status).toBe(401);
      expect(r.body.errors[0].extensions.code).toBe('unauthenticated');
    }
  });

  it('field-level scopes: forbidden on the field, the rest of the query still answers', async () => {
    const k = await app.key(clinicId, ['catalog:read']);
    const r = await app.gql('{ branches { id } patients(first: 1) { edges { node { id } } } }', {}, k);
    expect(r.body.data).toEqual({ branches: [], patients: null });
    expect(r.body.errors[0]).toMatchObject({
      path: ['patients'],
      extensions: { code: 'forbidden', required_scopes: ['patients:read'] },
    });
    const r2 = await app.gql('{ branches { id } vaccines { id } }', {}, k);
    expect(r2.body.errors[0]).toMatchObject({ path: ['vaccines'], extensions: { code: 'forbidden' } });
    expect(r2.body.data.vaccines).toBeNull();
    expect(r2.body.data.branches).toEqual([]);
  });

  it('serves GraphiQL to a browser without a key', async () => {
    const r = await fetch(`${app.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(r.status).toBe(200);
    expect(await r.text()).toContain('GraphiQL');
  });
});

describe('HTTP surface', () => {
  it('GET /health answers 200', async () => {
    const r = await fetch(`${app.url}/health`);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ status: 'ok' });
  });

  it.each([
    ['GET', '/v1/nope'],
    ['GET', '/v1/webhook'],
    ['POST', '/v1/webhook'],
    ['POST', '/v1/webhook/abc'],
    ['DELETE', '/v1/webhook/abc'],
    ['GET', '/v1'],
    ['GET', '/elsewhere'],
  ])('%s %s is a JSON 404 (SOFA built-ins unreachable)', async (method, path) => {
    const r = await fetch(`${app.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${fullKey}` },
      body: method === 'GET' ? undefined : '{}',
    });
    expect(r.status).toBe(404);
    expect((await r.json()).error.code).toBe('not_found');
  });

  it('a known path with another method is a 405 with Allow', async () => {
    const r = await fetch(`${app.url}/v1/patients`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${fullKey}` },
    });
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('GET, POST');
    expect((await r.json()).error.code).toBe('method_not_allowed');
  });

  it('every response carries its request id', async () => {
    const r = await app.get('/v1/patients', 'bad');
    expect(r.headers.get('x-request-id')).toBe(r.body.error.request_id);
  });
});
