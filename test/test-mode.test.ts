import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listApiKeys } from '../src/auth/keys.ts';
import { Clinic } from '../src/entities/index.ts';
import { toneWav } from '../src/media/wav.ts';
import { CALLBACK_PATH } from '../src/network/adapter.ts';
import { SandboxNetwork } from '../src/network/sandbox.ts';
import { QueuedReceipts } from '../src/network/sandbox-receipts.ts';
import { syncTemplates } from '../src/services/chat/template-sync.ts';
import { NETWORK_SECRET, startTestApp, type TestApp } from './helpers.ts';
import { jpeg, serve, type TestServer } from './media-files.ts';
import { until } from './until.ts';
import { type Receiver, startReceiver } from './webhook-receiver.ts';

/**
 * Test mode per clinic (issue 29, docs/test-mode.md), end to end over real HTTP and PostgreSQL:
 * the key says the mode; a live clinic's key cannot reach the sandbox's tools; a live clinic
 * sends through the network configured for live clinics (a 503 while there is none), a test
 * clinic through the sandbox; a test clinic's webhooks and media may be plain http on loopback,
 * a live clinic's may not (at creation, PATCH, download and every delivery attempt); and the
 * mode is the request's key's, not the process's.
 *
 * Two apps: `a` runs without a network for live clinics (as a deployment that configured none);
 * `b` has one, a second SandboxNetwork of its own (its own `sent` list), built as
 * src/server/start.ts builds the sandbox, calling back b's /hooks/network with its secret.
 */
let a: TestApp;
let b: TestApp;
let live: SandboxNetwork;
let files: TestServer;
const mediaHits: string[] = [];
const receivers: Receiver[] = [];
const wav = toneWav(0.25);
/** A public https address: a subscription to it is created, and nothing here ever reaches it. */
const PUBLIC = 'https://93.184.215.14/hooks';
const TEST_CLINICS_ONLY = /allowed for test clinics only \(cg_test_ keys/;

beforeAll(async () => {
  a = await startTestApp({ limits: { webhookTimeoutMs: 1500 } });
  const receipts = new QueuedReceipts();
  live = new SandboxNetwork({
    // b's address is known once it listens; the network asks for it at each callback.
    callbackUrl: () => `${b.url}${CALLBACK_PATH}`,
    secret: NETWORK_SECRET,
    clock: { now: () => b.clock.now() },
    delays: { sent: 10, delivered: 20, read: 30 },
    receipts,
  });
  b = await startTestApp({ liveNetwork: live, limits: { mediaDownloadTimeoutMs: 1500 } });
  // Its receipts kept on b's job queue, as start.ts keeps the sandbox's.
  await receipts.start(b.server.jobs.queue, (r) => live.postReceipt(r));
  files = await serve((req, res) => {
    const path = req.url ?? '';
    mediaHits.push(path);
    if (path === '/photo.jpg') return res.end(jpeg());
    if (path === '/call.wav') return res.end(wav);
    res.writeHead(404).end();
  });
});
afterAll(async () => {
  // Before the apps close (after-hooks run in reverse order of registration).
  live?.close();
  for (const r of receivers) await r.close();
});

let phones = 0;
const newPhone = () => `+97252${String(3000000 + ++phones * 17)}`;

const phoneOf = async (app: TestApp, clinicId: number) =>
  (await app.orm.em.fork().findOneOrFail(Clinic, clinicId)).phone as string;

const count = async (app: TestApp, sql: string, params: unknown[] = []) =>
  (await app.orm.em.fork().getConnection().execute<{ n: number }[]>(sql, params))[0].n;

const messagesOf = (app: TestApp, clinicId: number) =>
  count(app, 'select count(*)::int as n from "message" where "clinic_id" = ?', [clinicId]);

const sendJobs = (app: TestApp) =>
  count(app, `select count(*)::int as n from pgboss.job where name in ('chat-send', 'chat-send-failed')`);

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

const SANDBOX_INBOUND =
  'mutation($from: String!) { sandboxInbound(input: { from: $from, text: "Hello from the sandbox" }) { message { id conversationId } } }';
const SANDBOX_REACT =
  'mutation($id: ID!) { sandboxReact(input: { messageId: $id, emoji: "👍" }) { message { id reactions { patient } } } }';

describe('keys', () => {
  it("say the clinic's mode: cg_test_ for a test clinic, cg_live_ for a live one, and the stored prefix agrees", async () => {
    const t = await a.clinicWithKey('dental', ['patients:read'], 'Test keys', { mode: 'test' });
    const l = await a.clinicWithKey('dental', ['patients:read'], 'Live keys', { mode: 'live' });
    expect(t.key).toMatch(/^cg_test_[A-Za-z0-9_-]{43}$/);
    expect(l.key).toMatch(/^cg_live_[A-Za-z0-9_-]{43}$/);
    // A clinic's later keys too: the prefix is the clinic's, not the first key's.
    expect(await a.key(l.clinicId, ['patients:read'])).toMatch(/^cg_live_/);
    expect(await a.key(t.clinicId, ['patients:read'])).toMatch(/^cg_test_/);
    const [testKey] = await listApiKeys(a.orm.em.fork(), t.clinicId);
    const [liveKey] = await listApiKeys(a.orm.em.fork(), l.clinicId);
    expect(testKey.prefix).toBe(t.key.slice(0, 'cg_test_'.length + 6));
    expect(liveKey.prefix).toBe(l.key.slice(0, 'cg_live_'.length + 6));
    // Both keys work: the mode changes what a key may reach, not whether it is a key.
    for (const key of [t.key, l.key]) expect((await a.get('/v1/patients', key)).status).toBe(200);
  });
});

describe('the sandbox is for test clinics only', () => {
  it("sandboxInbound and sandboxReact with a live clinic's key: test_mode_only, nothing recorded; a test clinic's work", async () => {
    // In b, where live clinics have a network: being able to send does not open the sandbox.
    const l = await b.clinicWithKey('dental', ['chat:write'], 'Live chat', { mode: 'live' });
    const t = await b.clinicWithKey('dental', ['chat:write'], 'Test chat', { mode: 'test' });
    const patient = newPhone();
    // A real conversation of the live clinic, through its own network: the patient wrote, the
    // clinic answered (an outbound message with a network id, which a reaction needs).
    await live.inbound({ clinicPhone: await phoneOf(b, l.clinicId), from: patient, text: 'Hi' });
    const out = await b.post('/v1/chat/messages', { to: patient, text: 'Hello' }, l.key);
    expect(out.status, JSON.stringify(out.body)).toBe(202);
    await b.settle();
    const before = await messagesOf(b, l.clinicId);
    expect(before).toBe(2);

    const inbound = await b.gql(SANDBOX_INBOUND, { from: patient }, l.key);
    expect(inbound.body.data?.sandboxInbound ?? null).toBeNull();
    expect(inbound.body.errors).toHaveLength(1);
    expect(inbound.body.errors[0].message).toMatch(/sandboxInbound is for test clinics only/);
    expect(inbound.body.errors[0].message).toContain('cg_test_');
    expect(inbound.body.errors[0].extensions).toMatchObject({
      code: 'test_mode_only',
      doc_url: '/errors#test_mode_only',
    });
    const react = await b.gql(SANDBOX_REACT, { id: out.body.data.id }, l.key);
    expect(react.body.data?.sandboxReact ?? null).toBeNull();
    expect(react.body.errors[0].extensions).toMatchObject({
      code: 'test_mode_only',
      doc_url: '/errors#test_mode_only',
    });
    expect(react.body.errors[0].message).toMatch(/sandboxReact is for test clinics only/);
    // Nothing recorded for the live clinic: no message, no reaction.
    expect(await messagesOf(b, l.clinicId)).toBe(before);
    expect(
      await count(
        b,
        'select count(*)::int as n from "message" where "clinic_id" = ? and "reaction_patient" is not null',
        [l.clinicId],
      ),
    ).toBe(0);

    // The same mutations with a test clinic's key.
    const tIn = await b.gql(SANDBOX_INBOUND, { from: patient }, t.key);
    expect(tIn.body.errors, JSON.stringify(tIn.body)).toBeUndefined();
    expect(tIn.body.data.sandboxInbound.message.id).toMatch(/^in_\d+$/);
    const tOut = await b.post('/v1/chat/messages', { to: patient, text: 'Thanks' }, t.key);
    expect(tOut.status).toBe(202);
    await b.settle();
    const tReact = await b.gql(SANDBOX_REACT, { id: tOut.body.data.id }, t.key);
    expect(tReact.body.errors, JSON.stringify(tReact.body)).toBeUndefined();
    expect(tReact.body.data.sandboxReact.message.reactions.patient).toBe('👍');
  });

  it("POST /v1/events with a live clinic's key: 403 test_mode_only, no event; a test clinic's: 202, delivered", async () => {
    const l = await a.clinicWithKey('dental', ['webhooks:manage'], 'Live events', { mode: 'live' });
    const t = await a.clinicWithKey('dental', ['webhooks:manage'], 'Test events', { mode: 'test' });
    // The live clinic has a subscription receiving the type: the mode is the only reason to refuse.
    expect((await a.post('/v1/webhooks', { url: PUBLIC }, l.key)).status).toBe(201);
    const refused = await a.post('/v1/events', { type: 'patient.created' }, l.key);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'test_mode_only', doc_url: '/errors#test_mode_only' });
    expect(refused.body.error.message).toMatch(/POST \/v1\/events is for test clinics only/);
    expect(refused.body.error.message).toContain('cg_test_');
    expect(await count(a, 'select count(*)::int as n from "event" where "clinic_id" = ?', [l.clinicId])).toBe(
      0,
    );

    const r = await receiver();
    const sub = await a.post('/v1/webhooks', { url: r.url, event_types: ['patient.created'] }, t.key);
    expect(sub.status, JSON.stringify(sub.body)).toBe(201);
    r.secret = sub.body.data.secret;
    const accepted = await a.post('/v1/events', { type: 'patient.created' }, t.key);
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    await r.waitFor(1);
    expect(r.accepted[0]).toMatchObject({ id: accepted.body.data.id, type: 'patient.created' });
    expect(r.accepted[0].body.test).toBe(true);
  });
});

describe('the network of each mode', () => {
  it('a live clinic without a configured network: 503 network_not_configured over REST and GraphQL, nothing written or queued', async () => {
    const l = await a.clinicWithKey('dental', ['chat:write'], 'Live, no network', { mode: 'live' });
    const t = await a.clinicWithKey('dental', ['chat:write'], 'Test, sandbox', { mode: 'test' });
    const patient = newPhone();
    // The patient wrote to each (a network callback): the window is open, the sends otherwise fine.
    await a.server.network.inbound({ clinicPhone: await phoneOf(a, l.clinicId), from: patient, text: 'Hi' });
    await a.server.network.inbound({ clinicPhone: await phoneOf(a, t.clinicId), from: patient, text: 'Hi' });
    const messages = await messagesOf(a, l.clinicId);
    const jobs = await sendJobs(a);

    const r = await a.post('/v1/chat/messages', { to: patient, text: 'Hello' }, l.key);
    expect(r.status).toBe(503);
    expect(r.body.error).toMatchObject({
      code: 'network_not_configured',
      doc_url: '/errors#network_not_configured',
    });
    expect(r.body.error.message).toMatch(/No messaging network is configured for live clinics/);
    expect(r.body.error.message).toContain('cg_test_');
    const g = await a.gql(
      'mutation($to: String!) { sendMessage(input: { to: $to, text: "via graphql" }) { message { id } } }',
      { to: patient },
      l.key,
    );
    expect(g.body.data?.sendMessage ?? null).toBeNull();
    expect(g.body.errors[0].extensions.code).toBe('network_not_configured');
    expect(g.body.errors[0].message).toMatch(/No messaging network is configured for live clinics/);
    expect(await messagesOf(a, l.clinicId)).toBe(messages);
    expect(await sendJobs(a)).toBe(jobs);

    // A test clinic's send goes through the sandbox, in the same app.
    const ok = await a.post('/v1/chat/messages', { to: patient, text: 'Hello, test' }, t.key);
    expect(ok.status, JSON.stringify(ok.body)).toBe(202);
    await a.settle();
    expect(a.server.network.sent.filter((s) => s.to === patient)).toMatchObject([
      { kind: 'text', text: 'Hello, test' },
    ]);
  });

  it("with one configured: a live clinic's send reaches the live network only, a test clinic's the sandbox only", async () => {
    const l = await b.clinicWithKey('dental', ['chat:write'], 'Live, networked', { mode: 'live' });
    const t = await b.clinicWithKey('dental', ['chat:write'], 'Test, networked', { mode: 'test' });
    const lRead = await b.key(l.clinicId, ['chat:read']);
    const livePatient = newPhone();
    const testPatient = newPhone();
    await live.inbound({ clinicPhone: await phoneOf(b, l.clinicId), from: livePatient, text: 'Hi' });
    await b.server.network.inbound({
      clinicPhone: await phoneOf(b, t.clinicId),
      from: testPatient,
      text: 'Hi',
    });

    const lr = await b.post('/v1/chat/messages', { to: livePatient, text: 'To the live network' }, l.key);
    expect(lr.status, JSON.stringify(lr.body)).toBe(202);
    const tr = await b.post('/v1/chat/messages', { to: testPatient, text: 'To the sandbox' }, t.key);
    expect(tr.status, JSON.stringify(tr.body)).toBe(202);
    await b.settle();
    expect(live.sent.filter((s) => s.to === livePatient)).toMatchObject([
      { kind: 'text', text: 'To the live network', reference: lr.body.data.id },
    ]);
    expect(b.server.network.sent.filter((s) => s.to === livePatient)).toEqual([]);
    expect(b.server.network.sent.filter((s) => s.to === testPatient)).toMatchObject([
      { kind: 'text', text: 'To the sandbox', reference: tr.body.data.id },
    ]);
    expect(live.sent.filter((s) => s.to === testPatient)).toEqual([]);
    // The live network's receipts came back: the message went all the way.
    const status = await until(
      async () => (await b.get(`/v1/chat/messages/${lr.body.data.id}`, lRead)).body.data.status,
      (s) => s === 'read',
    );
    expect(status).toBe('read');
  });
});

describe('webhook URLs by mode', () => {
  it("a test clinic's plain-http loopback receiver: created and delivered to, signed", async () => {
    const t = await a.clinicWithKey('dental', ['webhooks:manage', 'patients:write'], 'Test hooks', {
      mode: 'test',
    });
    const r = await receiver();
    const sub = await a.post('/v1/webhooks', { url: r.url, event_types: ['patient.created'] }, t.key);
    expect(sub.status, JSON.stringify(sub.body)).toBe(201);
    expect(sub.body.data.url).toBe(r.url);
    r.secret = sub.body.data.secret;
    const p = await a.post('/v1/patients', { first_name: 'Ada', last_name: 'Test' }, t.key);
    expect(p.status).toBe(201);
    await r.waitFor(1);
    // The receiver checks the signature with the subscription's secret (and refuses otherwise).
    expect(r.refused).toBe(0);
    expect(r.accepted[0]).toMatchObject({ type: 'patient.created' });
    expect(r.accepted[0].body.data).toEqual(p.body.data);
  });

  it("a live clinic's: loopback refused at POST and PATCH (422 url, naming test clinics), and never delivered to when set behind the API's back", async () => {
    const l = await a.clinicWithKey('dental', ['webhooks:manage', 'patients:write'], 'Live hooks', {
      mode: 'live',
    });
    const r = await receiver();
    for (const url of [r.url, 'https://localhost/hooks', `https://127.0.0.1:${new URL(r.url).port}/hooks`]) {
      const c = await a.post('/v1/webhooks', { url }, l.key);
      expect(c.status, url).toBe(422);
      expect(c.body.error, url).toMatchObject({ code: 'validation_failed', param: 'url' });
      expect(c.body.error.message, url).toMatch(TEST_CLINICS_ONLY);
    }
    expect(
      await count(a, 'select count(*)::int as n from "webhook_subscription" where "clinic_id" = ?', [
        l.clinicId,
      ]),
    ).toBe(0);

    const sub = await a.post('/v1/webhooks', { url: PUBLIC, event_types: ['patient.created'] }, l.key);
    expect(sub.status).toBe(201);
    const id = sub.body.data.id as string;
    r.secret = sub.body.data.secret;
    for (const url of [r.url, 'https://localhost/hooks']) {
      const p = await a.send('PATCH', `/v1/webhooks/${id}`, { url }, l.key);
      expect(p.status, url).toBe(422);
      expect(p.body.error, url).toMatchObject({ code: 'validation_failed', param: 'url' });
      expect(p.body.error.message, url).toMatch(TEST_CLINICS_ONLY);
    }
    expect((await a.get(`/v1/webhooks/${id}`, l.key)).body.data.url).toBe(PUBLIC);

    // Changed in the database, past the API's checks: every attempt is held to the policy.
    await a.orm.em
      .fork()
      .getConnection()
      .execute('update "webhook_subscription" set "url" = ? where "id" = ?', [r.url, Number(id.slice(3))]);
    const p = await a.post('/v1/patients', { first_name: 'Ada', last_name: 'Live' }, l.key);
    expect(p.status).toBe(201);
    const [attempt] = await until(
      async () => (await a.get(`/v1/webhooks/${id}/deliveries?limit=10`, l.key)).body.data as any[],
      (log) => log.length > 0,
    );
    expect(attempt).toMatchObject({ status: 'failed', response_status: null });
    expect(attempt.error).toMatch(TEST_CLINICS_ONLY);
    // https to a loopback name: the scheme passes, the address it resolves to does not.
    await a.orm.em
      .fork()
      .getConnection()
      .execute('update "webhook_subscription" set "url" = ? where "id" = ?', [
        r.url.replace(/^http:\/\/127\.0\.0\.1/, 'https://localhost'),
        Number(id.slice(3)),
      ]);
    expect((await a.post('/v1/patients', { first_name: 'Ada', last_name: 'Again' }, l.key)).status).toBe(201);
    const log = await until(
      async () => (await a.get(`/v1/webhooks/${id}/deliveries?limit=10`, l.key)).body.data as any[],
      (entries) => entries.some((e) => /\(loopback range\)/.test(e.error)),
    );
    const refused = log.find((e) => /\(loopback range\)/.test(e.error));
    expect(refused).toMatchObject({ status: 'failed', response_status: null });
    expect(refused.error).toMatch(
      /resolved to an address that is not allowed when connecting \(loopback range\)/,
    );
    expect(r.hits).toBe(0);
  });
});

describe('media and recordings by mode', () => {
  it("a live clinic's media from a plain-http loopback server: 422 media.url naming test clinics, never fetched; a test clinic's is sent", async () => {
    const l = await b.clinicWithKey('dental', ['chat:write'], 'Live media', { mode: 'live' });
    const t = await b.clinicWithKey('dental', ['chat:write'], 'Test media', { mode: 'test' });
    await syncTemplates(b.orm.em.fork(), l.clinicId, live);
    await syncTemplates(b.orm.em.fork(), t.clinicId, b.server.network);
    const patient = newPhone();
    const url = `${files.url}/photo.jpg`;
    const hits = mediaHits.length;
    const messages = await messagesOf(b, l.clinicId);

    const r = await b.post('/v1/chat/messages', { to: patient, media: { type: 'image', url } }, l.key);
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({ code: 'validation_failed', param: 'media.url' });
    expect(r.body.error.message).toMatch(TEST_CLINICS_ONLY);
    expect(mediaHits.length).toBe(hits);
    expect(await messagesOf(b, l.clinicId)).toBe(messages);

    const ok = await b.post('/v1/chat/messages', { to: patient, media: { type: 'image', url } }, t.key);
    expect(ok.status, JSON.stringify(ok.body)).toBe(202);
    expect(mediaHits.slice(hits)).toEqual(['/photo.jpg']);
    await b.settle();
    expect(b.server.network.sent.filter((s) => s.to === patient)).toMatchObject([
      { kind: 'media', mediaType: 'image' },
    ]);
  });

  it("a live clinic's call recording from loopback: 422 url; a test clinic's is kept", async () => {
    const l = await b.clinicWithKey('dental', ['calls:write'], 'Live calls', { mode: 'live' });
    const t = await b.clinicWithKey('dental', ['calls:write'], 'Test calls', { mode: 'test' });
    const ended = {
      direction: 'inbound',
      from: '+972 50-123-4567',
      to: '03-555-0100',
      started_at: '2026-10-31T09:30:00+02:00',
      duration: 60,
      answered: true,
      recorded: true,
    };
    const url = `${files.url}/call.wav`;
    const hits = mediaHits.length;
    const lc = await b.post('/v1/calls', ended, l.key);
    expect(lc.status, JSON.stringify(lc.body)).toBe(201);
    const refused = await b.post(`/v1/calls/${lc.body.data.id}/recording`, { url }, l.key);
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: 'validation_failed', param: 'url' });
    expect(refused.body.error.message).toMatch(TEST_CLINICS_ONLY);
    expect(mediaHits.length).toBe(hits);

    const tc = await b.post('/v1/calls', ended, t.key);
    const kept = await b.post(`/v1/calls/${tc.body.data.id}/recording`, { url }, t.key);
    expect(kept.status, JSON.stringify(kept.body)).toBe(200);
    expect(kept.body.data.recording).toEqual({ available: true });
    expect(mediaHits.slice(hits)).toEqual(['/call.wav']);
  });
});

describe('the mode is the request’s', () => {
  it("interleaved requests of a test and a live clinic's keys in one process each get their own clinic's policy", async () => {
    const scopes = ['webhooks:manage', 'chat:write'];
    const t = await a.clinicWithKey('dental', scopes, 'Test, interleaved', { mode: 'test' });
    const l = await a.clinicWithKey('dental', scopes, 'Live, interleaved', { mode: 'live' });
    const r = await receiver();
    const patient = newPhone();
    await a.server.network.inbound({ clinicPhone: await phoneOf(a, t.clinicId), from: patient, text: 'Hi' });
    const keys = [t.key, l.key, l.key, t.key, t.key, l.key, l.key, t.key];
    const requests = keys.flatMap((key, i) => [
      a.post('/v1/webhooks', { url: r.url, description: `#${i}` }, key),
      a.gql(SANDBOX_INBOUND, { from: patient }, key),
      a.post('/v1/chat/messages', { to: patient, text: `#${i}` }, key),
    ]);
    const answers = await Promise.all(requests);
    keys.forEach((key, i) => {
      const [hook, inbound, send] = answers.slice(i * 3, i * 3 + 3);
      if (key === t.key) {
        expect(hook.status, `#${i} webhook`).toBe(201);
        expect(inbound.body.errors, `#${i} sandboxInbound`).toBeUndefined();
        expect(send.status, `#${i} send`).toBe(202);
      } else {
        expect(hook.status, `#${i} webhook`).toBe(422);
        expect(hook.body.error.message).toMatch(TEST_CLINICS_ONLY);
        expect(inbound.body.errors?.[0].extensions.code, `#${i} sandboxInbound`).toBe('test_mode_only');
        expect(send.status, `#${i} send`).toBe(503);
        expect(send.body.error.code).toBe('network_not_configured');
      }
    });
    await a.settle();
  });
});
