import { beforeAll, describe, expect, it } from 'vitest';
import { readScopes } from '../src/auth/scopes.ts';
import { fixtures } from './fixtures.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * A read-only request makes no EntityManager of its own: lists read through the clinic's shared
 * read handle, and the request's fork is made on first use (src/lib/request-context.ts). GraphQL
 * copies the request context into its own, which must not read (and so fork) it either.
 */
let app: TestApp;
let key: string;

beforeAll(async () => {
  // Keys cached, as in production: a key lookup that misses the cache forks an EntityManager.
  app = await startTestApp({ keyCacheTtlMs: 60_000 });
  const c = await app.clinicWithKey('veterinary', readScopes);
  key = c.key;
  await fixtures(app.orm, c.clinicId).patient({ first: 'Rex', last: 'Cohen', phone: '050-000-1234' });
});

/** The id the next EntityManager made in this process will have (ids count up from one). */
const nextEmId = () => app.orm.em.fork().id + 1;

describe('read-only requests', () => {
  it('fork no EntityManager, over REST or GraphQL', async () => {
    const query = '{ patients(first: 2) { edges { node { id firstName } } } }';
    const reads = async () => {
      expect((await app.get('/v1/patients?limit=2', key)).status).toBe(200);
      const g = await app.gql(query, {}, key);
      expect(g.body.data.patients.edges[0].node.firstName).toBe('Rex');
    };
    await reads(); // the key lookup, the read handle and the statements' shapes, made once
    const before = nextEmId();
    await reads();
    await reads();
    expect(nextEmId()).toBe(before + 1);
  });
});
