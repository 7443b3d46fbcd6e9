import { beforeAll, describe, expect, it } from 'vitest';
import { readScopes } from '../src/auth/scopes.ts';
import { seedPatients } from '../src/demo/seed-patients.ts';
import { Clinic, Event, WebhookDelivery, WebhookSubscription } from '../src/entities/index.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * Nested lists are planned at every depth (src/schema/child-pages.ts): a page of patients plans
 * its patients' chat conversations and messages, and the conversations' messages below them; a
 * page of conversations its conversations' messages; a page of webhook subscriptions their
 * deliveries. Each level's pages are read for all of that level's items at once, so a query
 * costs the same number of statements whatever the size of its pages, and answers as the fields'
 * own resolvers do. test/child-pages-used.test.ts tells a planned list from a loader's.
 */
let app: TestApp;
let key: string;
let clinicId: number;

beforeAll(async () => {
  app = await startTestApp({ workers: false });
  const c = await app.clinicWithKey('veterinary', readScopes);
  key = c.key;
  clinicId = c.clinicId;
  await seedPatients(app.orm.em.fork(), clinicId, 60);
  // A conversation per patient phone (animals of one owner share one), four messages in each.
  const sql = app.orm.em.fork().getConnection();
  await sql.execute(
    `insert into conversation (clinic_id, patient_phone, display_name, last_activity_at, created_at, updated_at)
     select ?, phone, 'Owner ' || min(id), now() - (min(id) % 17) * interval '1 hour', now(), now()
     from patient where clinic_id = ? and phone is not null group by phone`,
    [clinicId, clinicId],
  );
  await sql.execute(
    `insert into message (clinic_id, conversation_id, direction, type, patient_phone, text, created_at, updated_at)
     select c.clinic_id, c.id, case when n % 2 = 0 then 'inbound' else 'outbound' end, 'text', c.patient_phone,
            'hello ' || n, now() - (n * 7 + c.id % 5) * interval '1 minute', now()
     from conversation c, generate_series(1, 4) n where c.clinic_id = ?`,
    [clinicId],
  );
});

async function run(query: string, variables: Record<string, unknown> = {}, k = key) {
  const before = app.queries.length;
  const r = await app.gql(query, variables, k);
  const sql = app.queries.slice(before).filter((q) => /\bselect\b/i.test(q));
  return {
    body: r.body,
    sql,
    chat: sql.filter((q) => /from "(conversation|message)"/.test(q)),
  };
}

const conversationNode = `{ id patientPhone displayName patients { id firstName }
  messages(first: 3) { pageInfo { hasNextPage endCursor } edges { cursor node { id text direction patients { id } } } } }`;
const patientChat = (conversations = '', messages = '(first: 2)') => `{ id
  chatConversations${conversations} { pageInfo { hasNextPage } edges { cursor node ${conversationNode} } }
  chatMessages${messages} { pageInfo { hasNextPage endCursor } edges { cursor node { id text patients { id } } } } }`;

describe('patients → chatConversations → messages, and chatMessages', () => {
  it('cost the same statements for 5 patients as for 40', async () => {
    const q = (n: number) => `{ patients(first: ${n}) { edges { node ${patientChat()} } } }`;
    const small = await run(q(5));
    const large = await run(q(40));
    expect(large.body.errors).toBeUndefined();
    const nodes = large.body.data.patients.edges.map((e: any) => e.node);
    expect(nodes).toHaveLength(40);
    expect(nodes.filter((p: any) => p.chatConversations.edges.length).length).toBeGreaterThan(30);
    expect(
      nodes.every((p: any) =>
        p.chatConversations.edges.every((c: any) => c.node.messages.edges.length === 3),
      ),
    ).toBe(true);
    expect(large.sql.length).toBe(small.sql.length);
    // Conversations, the conversations' messages, the patients' messages.
    expect(large.chat).toHaveLength(3);
  });

  it('answer as each patient read on its own (the loaders) and as the unbatched reads (a filter) do', async () => {
    const planned = await run(`{ patients(first: 12) { edges { node ${patientChat()} } } }`);
    expect(planned.body.errors).toBeUndefined();
    const nodes = planned.body.data.patients.edges.map((e: any) => e.node);
    const alone = await run(
      `{ ${nodes.map((n: any, i: number) => `a${i}: patient(id: "${n.id}") ${patientChat()}`).join(' ')} }`,
    );
    expect(alone.body.errors).toBeUndefined();
    expect(nodes).toEqual(nodes.map((_: unknown, i: number) => alone.body.data[`a${i}`]));
    // Filters that keep every row take each list's own, unbatched read.
    const unbatched = await run(
      `{ patients(first: 12) { edges { node ${patientChat(
        '(isHandled: false)',
        '(first: 2, from: "2000-01-01")',
      ).replace('messages(first: 3)', 'messages(first: 3, from: "2000-01-01")')} } } }`,
    );
    expect(unbatched.body.errors).toBeUndefined();
    expect(unbatched.body.data.patients.edges.map((e: any) => e.node)).toEqual(nodes);
    expect(unbatched.chat.length).toBeGreaterThan(12);
  });

  it('the next page follows the planned page’s cursor', async () => {
    const planned = await run(`{ patients(first: 12) { edges { node ${patientChat()} } } }`);
    const p = planned.body.data.patients.edges
      .map((e: any) => e.node)
      .find((n: any) => n.chatConversations.edges.length);
    const conversation = p.chatConversations.edges[0].node;
    expect(conversation.messages.pageInfo.hasNextPage).toBe(true);
    const next = await run(
      `query($after: String) { conversation(id: "${conversation.id}") { messages(first: 3, after: $after) { edges { node { id } } } } }`,
      { after: conversation.messages.pageInfo.endCursor },
    );
    expect(next.body.errors).toBeUndefined();
    expect(next.body.data.conversation.messages.edges).toHaveLength(1);
    const all = await run(
      `{ conversation(id: "${conversation.id}") { messages(first: 4) { edges { node { id } } } } }`,
    );
    expect(all.body.data.conversation.messages.edges.map((e: any) => e.node.id)).toEqual([
      ...conversation.messages.edges.map((e: any) => e.node.id),
      next.body.data.conversation.messages.edges[0].node.id,
    ]);
  });

  it('a key without chat:read: null and forbidden on the nested field, and no chat statement', async () => {
    const k = await app.key(clinicId, ['patients:read']);
    const r = await run(`{ patients(first: 3) { edges { node ${patientChat()} } } }`, {}, k);
    expect(r.body.data.patients.edges[0].node).toEqual({
      id: expect.any(String),
      chatConversations: null,
      chatMessages: null,
    });
    expect(r.body.errors[0]).toMatchObject({
      path: ['patients', 'edges', 0, 'node', 'chatConversations'],
      extensions: { code: 'forbidden', required_scopes: ['chat:read'] },
    });
    expect(r.chat).toHaveLength(0);
  });

  it('a refused argument below is refused by that field, named as the query wrote it', async () => {
    const r = await run(
      `{ patients(first: 3) { edges { node { id chatConversations { edges { node { id messages(first: 0) { edges { node { id } } } } } } } } } }`,
    );
    expect(r.body.errors?.length).toBeGreaterThan(0);
    expect(r.body.errors[0]).toMatchObject({ extensions: { code: 'validation_failed', param: 'first' } });
  });
});

describe('conversations → messages', () => {
  it('cost the same statements for 5 conversations as for 30, answered as conversation(id:) does', async () => {
    const q = (n: number) => `{ conversations(first: ${n}) { edges { node ${conversationNode} } } }`;
    const small = await run(q(5));
    const large = await run(q(30));
    expect(large.body.errors).toBeUndefined();
    const nodes = large.body.data.conversations.edges.map((e: any) => e.node);
    expect(nodes).toHaveLength(30);
    expect(large.sql.length).toBe(small.sql.length);
    expect(large.chat).toHaveLength(2);
    const alone = await run(
      `{ ${nodes.map((n: any, i: number) => `a${i}: conversation(id: "${n.id}") ${conversationNode}`).join(' ')} }`,
    );
    expect(alone.body.errors).toBeUndefined();
    expect(nodes).toEqual(nodes.map((_: unknown, i: number) => alone.body.data[`a${i}`]));
  });
});

describe('conversations → messages, a later page', () => {
  it('is read by each conversation’s own field (the plan covers first pages only)', async () => {
    const first = await run(
      '{ conversations(first: 5) { edges { node { id messages(first: 2) { pageInfo { endCursor } edges { node { id } } } } } } }',
    );
    const c = first.body.data.conversations.edges[2].node;
    const next = await run(
      `query($after: String) { conversations(first: 5) { edges { node { id messages(first: 2, after: $after) { edges { node { id } } } } } } }`,
      { after: c.messages.pageInfo.endCursor },
    );
    expect(next.body.errors).toBeUndefined();
    const same = next.body.data.conversations.edges.find((e: any) => e.node.id === c.id).node;
    const all = await run(`{ conversation(id: "${c.id}") { messages(first: 4) { edges { node { id } } } } }`);
    expect(same.messages.edges.map((e: any) => e.node.id)).toEqual(
      all.body.data.conversation.messages.edges.slice(2).map((e: any) => e.node.id),
    );
  });
});

describe('webhooks → deliveries', () => {
  let manage: string;
  beforeAll(async () => {
    const c = await app.clinicWithKey('dental', ['webhooks:manage', 'chat:read']);
    manage = c.key;
    const em = app.orm.em.fork();
    em.setFilterParams('tenant', { clinicId: c.clinicId });
    const clinic = em.getReference(Clinic, c.clinicId);
    for (let h = 0; h < 12; h++) {
      const r = await app.post(
        '/v1/webhooks',
        { url: `https://93.184.215.14/hooks/${h}`, event_types: ['patient.updated'] },
        manage,
      );
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      const subscription = em.getReference(WebhookSubscription, Number(r.body.data.id.slice(3)));
      for (let i = 0; i < 3; i++) {
        const event = em.create(Event, { clinic, type: 'patient.updated', scope: 'patients:read', data: {} });
        em.create(WebhookDelivery, {
          clinic,
          subscription,
          event,
          trigger: 'scheduled',
          status: 'failed',
          attempt: 1,
          attemptedAt: new Date(Date.UTC(2026, 10, 1, 10, h, i)),
          nextAttemptAt: null,
          responseStatus: 500,
          responseExcerpt: null,
          error: 'HTTP 500',
          durationMs: 5,
        });
      }
    }
    await em.flush();
  });

  it('cost the same statements for 3 subscriptions as for 12, answered as node(id:) does', async () => {
    const node =
      '{ id url deliveries(first: 2) { pageInfo { hasNextPage } edges { cursor node { id attemptedAt subscription { id url } event { id type } } } } }';
    const q = (n: number) => `{ webhooks(first: ${n}) { edges { node ${node} } } }`;
    const deliveries = (sql: string[]) => sql.filter((s) => s.includes('"webhook_delivery"'));
    const small = await run(q(3), {}, manage);
    const large = await run(q(12), {}, manage);
    expect(large.body.errors).toBeUndefined();
    const nodes = large.body.data.webhooks.edges.map((e: any) => e.node);
    expect(nodes).toHaveLength(12);
    expect(
      nodes.every((n: any) => n.deliveries.edges.length === 2 && n.deliveries.pageInfo.hasNextPage),
    ).toBe(true);
    expect(large.sql.length).toBe(small.sql.length);
    expect(deliveries(large.sql)).toHaveLength(1);
    const alone = await run(
      `{ ${nodes.map((n: any, i: number) => `a${i}: node(id: "${n.id}") { ... on WebhookSubscription ${node} }`).join(' ')} }`,
      {},
      manage,
    );
    expect(alone.body.errors).toBeUndefined();
    expect(nodes).toEqual(nodes.map((_: unknown, i: number) => alone.body.data[`a${i}`]));
  });
});
