import { beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { readScopes } from '../src/auth/scopes.ts';
import { seedPatients } from '../src/demo/seed-patients.ts';
import { Clinic, Event, WebhookDelivery, WebhookSubscription } from '../src/entities/index.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * That the plan is used (src/schema/child-pages.ts), not only that its answers are right:
 * test/child-pages.test.ts cannot tell a planned list from the batched loader's (both run the
 * same statement and give the same answer). Here each item's field is counted as it finds its
 * prefetched page; the app runs in this process, so the wrapped module is the one it imports.
 */
const hits = vi.hoisted(() => ({ planned: 0, missed: 0 }));
const plan = vi.hoisted(() => ({ off: false }));

vi.mock('../src/schema/child-pages.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../src/schema/child-pages.ts')>();
  return {
    ...original,
    // Off: every list is read by its field's own resolver (the fallback), as without a plan.
    prefetchChildPages: (...args: Parameters<typeof original.prefetchChildPages>) =>
      plan.off ? Promise.resolve() : original.prefetchChildPages(...args),
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
  await seedPatients(app.orm.em.fork(), c.clinicId, 50);
  // A conversation per patient phone, three messages in each.
  const sql = app.orm.em.fork().getConnection();
  await sql.execute(
    `insert into conversation (clinic_id, patient_phone, last_activity_at, created_at, updated_at)
     select ?, phone, now() - (min(id) % 13) * interval '1 hour', now(), now()
     from patient where clinic_id = ? and phone is not null group by phone`,
    [c.clinicId, c.clinicId],
  );
  await sql.execute(
    `insert into message (clinic_id, conversation_id, direction, type, patient_phone, text, created_at, updated_at)
     select c.clinic_id, c.id, 'inbound', 'text', c.patient_phone, 'hi ' || n, now() - n * interval '1 minute', now()
     from conversation c, generate_series(1, 3) n where c.clinic_id = ?`,
    [c.clinicId],
  );
});

beforeEach(() => {
  hits.planned = 0;
  hits.missed = 0;
  plan.off = false;
});

async function statements(run: () => Promise<unknown>): Promise<number> {
  const before = app.queries.length;
  await run();
  return app.queries.slice(before).filter((q) => /\bselect\b/i.test(q)).length;
}

const patientsChat = (n: number) =>
  `{ patients(first: ${n}) { edges { node { id
     chatConversations { edges { node { id messages(first: 3) { edges { node { id } } } } } }
     chatMessages(first: 2) { edges { node { id } } } } } } }`;

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

describe('planned at every depth', () => {
  it("a page of patients plans their chat conversations, the conversations' messages and their chat messages", async () => {
    const r = await app.gql(patientsChat(25), {}, key);
    expect(r.body.errors).toBeUndefined();
    const patients = r.body.data.patients.edges.map((e: any) => e.node);
    const conversations = patients.reduce((n: number, p: any) => n + p.chatConversations.edges.length, 0);
    expect(conversations).toBeGreaterThan(20);
    // Each patient's two lists, and each conversation's messages.
    expect(hits).toMatchObject({ planned: 50 + conversations, missed: 0 });
  });

  it('a page of conversations plans their messages', async () => {
    const r = await app.gql(
      '{ conversations(first: 20) { edges { node { id messages(first: 3) { edges { node { id } } } } } } }',
      {},
      key,
    );
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data.conversations.edges).toHaveLength(20);
    expect(hits).toMatchObject({ planned: 20, missed: 0 });
  });

  it('a page of webhook subscriptions plans their deliveries', async () => {
    const c = await app.clinicWithKey('dental', ['webhooks:manage']);
    const em = app.orm.em.fork();
    em.setFilterParams('tenant', { clinicId: c.clinicId });
    const clinic = em.getReference(Clinic, c.clinicId);
    for (let h = 0; h < 4; h++) {
      const r = await app.post(
        '/v1/webhooks',
        { url: `https://93.184.215.14/hooks/${h}`, event_types: ['patient.updated'] },
        c.key,
      );
      expect(r.status).toBe(201);
      const event = em.create(Event, { clinic, type: 'patient.updated', scope: 'patients:read', data: {} });
      em.create(WebhookDelivery, {
        clinic,
        subscription: em.getReference(WebhookSubscription, Number(r.body.data.id.slice(3))),
        event,
        trigger: 'scheduled',
        status: 'failed',
        attempt: 1,
        attemptedAt: new Date(Date.UTC(2026, 10, 1, 10, h)),
        nextAttemptAt: null,
        responseStatus: 500,
        responseExcerpt: null,
        error: 'HTTP 500',
        durationMs: 5,
      });
    }
    await em.flush();
    hits.planned = 0;
    const r = await app.gql(
      '{ webhooks(first: 10) { edges { node { id deliveries(first: 2) { edges { node { id } } } } } } }',
      {},
      c.key,
    );
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data.webhooks.edges.every((e: any) => e.node.deliveries.edges.length === 1)).toBe(true);
    expect(hits).toMatchObject({ planned: 4, missed: 0 });
  });

  it('without the plan, the fields’ own loaders batch as well: as many statements for 5 patients as for 40', async () => {
    plan.off = true;
    const small = await statements(() => app.gql(patientsChat(5), {}, key));
    const large = await statements(async () => {
      const r = await app.gql(patientsChat(40), {}, key);
      expect(r.body.errors).toBeUndefined();
      expect(r.body.data.patients.edges).toHaveLength(40);
    });
    expect(hits.planned).toBe(0);
    expect(hits.missed).toBeGreaterThan(80);
    expect(large).toBe(small);
  });
});
