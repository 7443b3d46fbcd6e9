import { beforeAll, describe, expect, it, vi } from 'vitest';
import { readScopes } from '../src/auth/scopes.ts';
import { seedPatients } from '../src/demo/seed-patients.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * That the plan is used (src/schema/child-pages.ts), not only that its answers are right:
 * test/child-pages.test.ts cannot tell a planned list from the batched loader's (both run the
 * same statement and give the same answer). Here each item's field is counted as it finds its
 * prefetched page; the app runs in this process, so the wrapped module is the one it imports.
 */
const hits = vi.hoisted(() => ({ planned: 0, missed: 0 }));

vi.mock('../src/schema/child-pages.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../src/schema/child-pages.ts')>();
  return {
    ...original,
    prefetchedPage: (...args: Parameters<typeof original.prefetchedPage>) => {
      const page = original.prefetchedPage(...args);
      if (page) hits.planned++;
      else hits.missed++;
      return page;
    },
  };
});

let app: TestApp;
let key: string;

beforeAll(async () => {
  app = await startTestApp();
  const c = await app.clinicWithKey('veterinary', readScopes);
  key = c.key;
  await seedPatients(app.orm.em.fork(), c.clinicId, 30);
});

describe('the child-pages plan', () => {
  it("answers every patient's first page of each selected list from the page's prefetch", async () => {
    hits.planned = 0;
    hits.missed = 0;
    const r = await app.gql(
      '{ patients(first: 25) { edges { node { id appointments(first: 5) { edges { node { id } } } payments(first: 2) { edges { node { id } } } } } } }',
      {},
      key,
    );
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data.patients.edges).toHaveLength(25);
    expect(hits).toEqual({ planned: 50, missed: 0 });
  });

  it('the animals connection plans the same lists (registered on the Patient type)', async () => {
    hits.planned = 0;
    hits.missed = 0;
    const r = await app.gql(
      '{ animals(first: 10) { edges { node { id treatments(first: 3) { edges { node { id } } } } } } }',
      {},
      key,
    );
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data.animals.edges).toHaveLength(10);
    expect(hits).toEqual({ planned: 10, missed: 0 });
  });

  it('a single patient (no page to plan for) is answered by the loader', async () => {
    const first = await app.gql('{ patients(first: 1) { edges { node { id } } } }', {}, key);
    hits.planned = 0;
    hits.missed = 0;
    const r = await app.gql(
      'query($id: ID!) { patient(id: $id) { appointments(first: 5) { edges { node { id } } } } }',
      { id: first.body.data.patients.edges[0].node.id },
      key,
    );
    expect(r.body.errors).toBeUndefined();
    expect(hits).toEqual({ planned: 0, missed: 1 });
  });
});
