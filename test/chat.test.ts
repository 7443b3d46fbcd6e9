import { readFileSync } from 'node:fs';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Clinic } from '../src/entities/index.ts';
import { clinicReaders } from '../src/lib/request-context.ts';
import { signBody } from '../src/lib/signing.ts';
import { NetworkRefusal } from '../src/network/adapter.ts';
import { REJECTION_REASON } from '../src/network/sandbox.ts';
import { previewOf } from '../src/services/chat/changes.ts';
import { syncTemplates } from '../src/services/chat/template-sync.ts';
import { fixtures } from './fixtures.ts';
import { NETWORK_SECRET, startTestApp, type TestApp } from './helpers.ts';

/**
 * The chat inbox end to end: the sandbox network calls the real callback endpoint over HTTP on
 * loopback; the 24-hour and 30-day limits are crossed with the test clock, not by sleeping.
 */
let app: TestApp;
let read: string;
let write: string;
let clinicId: number;
let clinicPhone: string;
let n = 0;

beforeAll(async () => {
  app = await startTestApp();
  const c = await app.clinicWithKey('dental', ['chat:read', 'patients:read']);
  clinicId = c.clinicId;
  read = c.key;
  write = await app.key(clinicId, ['chat:write']);
  const em = app.orm.em.fork();
  const clinic = await em.findOneOrFail(Clinic, clinicId);
  clinic.handledMarkingEnabled = true;
  await em.flush();
  clinicPhone = clinic.phone as string;
  await syncTemplates(app.orm.em.fork(), clinicId, app.server.network);
});

beforeEach(() => {
  app.clock.set('2026-11-01T10:00:00Z');
});

const network = () => app.server.network;
/** A fresh patient number per test, so tests do not share windows. */
const newPhone = () => `+97250${String(1000000 + ++n * 7)}`;
const local = (e164: string) => `0${e164.slice(4)}`;

async function inbound(from: string, text = 'Hello', extra: Record<string, unknown> = {}) {
  return (await network().inbound({ clinicPhone, from, text, ...extra })) as {
    id: string;
    conversation_id: string;
    status: string;
  };
}

const send = (body: unknown, headers: Record<string, string> = {}) =>
  app.post('/v1/chat/messages', body, write, headers);
const getMessage = async (id: string) => (await app.get(`/v1/chat/messages/${id}`, read)).body.data;

describe('inbound messages through the signed callback', () => {
  it('opens a conversation per phone, with the profile name, matched patients and a 24-hour window', async () => {
    const phone = newPhone();
    const patient = await fixtures(app.orm, clinicId).patient({
      first: 'Dana',
      last: 'Levi',
      phone: local(phone),
    });
    const r = await inbound(phone, 'Can I come today?', { profileName: 'Dana L' });
    expect(r.status).toBe('recorded');
    expect(r.id).toMatch(/^in_\d+$/);
    const conv = (await app.get(`/v1/chat/conversations/${r.conversation_id}`, read)).body.data;
    expect(conv).toMatchObject({
      display_name: 'Dana L',
      patient_phone: local(phone),
      last_message_preview: 'Can I come today?',
      last_inbound_at: '2026-11-01T10:00:00.000Z',
      last_outbound_at: null,
      is_handled: false,
      free_text_window_expires_at: '2026-11-02T10:00:00.000Z',
      patients: [{ id: `pat_${patient.id}`, first_name: 'Dana', last_name: 'Levi', phone: local(phone) }],
    });
    const m = await getMessage(r.id);
    expect(m).toMatchObject({
      direction: 'inbound',
      type: 'text',
      status: 'received',
      from_phone: local(phone),
      patient_phone: local(phone),
      timestamps: null,
      media: { available: false, type: null },
      reactions: { patient: null, clinic: null },
    });
    // A second message keeps the one conversation; the window closes 24 h after the last one.
    app.clock.set('2026-11-01T12:00:00Z');
    const long = `Hello again. ${'Is Tuesday possible? '.repeat(20)}`;
    const again = await inbound(phone, long);
    expect(again.conversation_id).toBe(r.conversation_id);
    // The preview is the latest message's text, whole (spec: "text of most recent message").
    expect((await app.get(`/v1/chat/conversations/${r.conversation_id}`, read)).body.data).toMatchObject({
      last_message_preview: long,
    });
    expect(previewOf({ text: null })).toBeNull();
    expect(previewOf({ text: '' })).toBeNull();
    app.clock.set('2026-11-02T11:59:59.999Z');
    expect(
      (await app.get(`/v1/chat/conversations/${r.conversation_id}`, read)).body.data
        .free_text_window_expires_at,
    ).toBe('2026-11-02T12:00:00.000Z');
    app.clock.set('2026-11-02T12:00:00Z');
    expect(
      (await app.get(`/v1/chat/conversations/${r.conversation_id}`, read)).body.data
        .free_text_window_expires_at,
    ).toBeNull();
  });

  it('a bad or missing signature is a 401 and stores nothing; a duplicate callback is recorded once', async () => {
    const phone = newPhone();
    const event = {
      type: 'message.inbound',
      network_message_id: `dup_${phone}`,
      clinic_phone: clinicPhone,
      from: phone,
      profile_name: null,
      message_type: 'text',
      text: 'hi',
      media: null,
      contacts: null,
      reply_to_network_message_id: null,
      at: '2026-11-01T10:00:00Z',
    };
    const body = JSON.stringify(event);
    const post = (headers: Record<string, string>) => app.post('/hooks/network', body, null, headers);
    expect((await post({})).status).toBe(401);
    expect((await post({ 'x-service-signature': signBody('wrong secret', body) })).status).toBe(401);
    expect((await post({ 'x-service-signature': `sha256=${'0'.repeat(64)}` })).status).toBe(401);
    const listed = async () => (await app.get(`/v1/chat/messages?phone=${local(phone)}`, read)).body.data;
    expect(await listed()).toEqual([]);
    const first = await network().callback(event as never);
    const second = await network().callback(event as never);
    expect(first).toMatchObject({ status: 'recorded' });
    expect(second).toMatchObject({ status: 'duplicate', id: (first as { id: string }).id });
    expect(await listed()).toHaveLength(1);
    // A signed body that is not a callback is a 422, and stores nothing either.
    const bad = JSON.stringify({ ...event, network_message_id: 'other', from: 'not a phone' });
    const r = await app.post('/hooks/network', bad, null, {
      'x-service-signature': signBody(NETWORK_SECRET, bad),
    });
    expect(r.status).toBe(422);
    expect(r.body.error.message).toMatch(/^from:/);
    expect(await listed()).toHaveLength(1);
    expect((await app.get('/hooks/network', null)).status).toBe(405);
  });
});

describe('sending', () => {
  it('free text inside the window: 202 queued, then sent, delivered and read receipts over HTTP', async () => {
    const phone = newPhone();
    await inbound(phone);
    const r = await send({ to: local(phone).replace(/(\d{3})(\d{3})/, '$1-$2 '), text: 'Yes, at 16:00' });
    expect(r.status).toBe(202);
    expect(r.body.meta).toEqual({ delivery_mode: 'free_text', caption: null });
    expect(r.body.data).toMatchObject({
      direction: 'outbound',
      status: 'queued',
      text: 'Yes, at 16:00',
      template: null,
      from_phone: clinicPhone.slice(1),
      to_phone: phone.slice(1),
      patient_phone: local(phone),
      timestamps: { sent_at: null, delivered_at: null, read_at: null, failed_at: null },
    });
    await app.settle();
    const m = await getMessage(r.body.data.id);
    expect(m.status).toBe('read');
    expect(m.timestamps.sent_at && m.timestamps.delivered_at && m.timestamps.read_at).toBeTruthy();
    expect(network().sent.at(-1)).toMatchObject({ kind: 'text', to: phone, text: 'Yes, at 16:00' });
  });

  it('free text with the window closed goes out in the marketing template (template_fallback)', async () => {
    const phone = newPhone();
    await inbound(phone);
    app.clock.set('2026-11-02T10:00:00Z');
    const r = await send({ to: phone, text: 'Your results are ready' });
    expect(r.status).toBe(202);
    expect(r.body.meta.delivery_mode).toBe('template_fallback');
    expect(r.body.data.template).toBe('clinic_message');
    await app.settle();
    expect(network().sent.at(-1)).toMatchObject({
      kind: 'template',
      template: 'clinic_message',
      params: ['Your results are ready'],
    });
    // A number that never wrote: no window either.
    expect((await send({ to: newPhone(), text: 'Hi' })).body.meta.delivery_mode).toBe('template_fallback');
  });

  it('templates: sendable by name with exactly its parameter count; unknown and unsendable are two different 422s', async () => {
    const to = newPhone();
    const ok = await send({ to, template: 'appointment_reminder', params: ['Dana', 'Monday 10:00'] });
    expect(ok.status).toBe(202);
    expect(ok.body.meta.delivery_mode).toBe('template');
    expect(ok.body.data.template).toBe('appointment_reminder');
    expect(ok.body.data.text).toBe('Hello Dana, this is a reminder of your appointment on Monday 10:00.');
    const unknown = await send({ to, template: 'no_such_template' });
    const rejected = await send({ to, template: 'spring_promotion' });
    const bound = await send({ to, template: 'appointment_confirmation_linked', params: ['a', 'b', 'c'] });
    const pending = await send({ to, template: 'vaccination_due', params: ['Rex'] });
    for (const r of [unknown, rejected, bound, pending]) {
      expect(r.status).toBe(422);
      expect(r.body.error.param).toBe('template');
    }
    expect(unknown.body.error.message).toMatch(/Unknown template/);
    expect(rejected.body.error.message).toMatch(/cannot be sent.*not approved/);
    expect(bound.body.error.message).toMatch(/cannot be sent.*bound to an internal record/);
    expect(rejected.body.error.message).not.toBe(unknown.body.error.message);
    const few = await send({ to, template: 'appointment_reminder', params: ['Dana'] });
    expect(few.status).toBe(422);
    expect(few.body.error).toMatchObject({ param: 'params' });
    expect((await send({ to, template: 'clinic_hours', params: ['x'] })).status).toBe(422);
    expect((await send({ to, template: 'clinic_hours' })).status).toBe(202);
  });

  it('refuses a body that is not exactly one of text, template or media, naming the field', async () => {
    const to = newPhone();
    const cases: [unknown, string][] = [
      [{ to }, 'text'],
      [{ to, text: 'a', template: 'clinic_hours' }, 'template'],
      [{ text: 'a' }, 'to'],
      [{ to: 'not a phone', text: 'a' }, 'to'],
      [{ to: 5, text: 'a' }, 'to'],
      [{ to, text: 5 }, 'text'],
      [{ to, text: '   ' }, 'text'],
      [{ to, text: 'x'.repeat(4097) }, 'text'],
      [{ to, text: 'a', colour: 'red' }, 'colour'],
      [{ to, text: 'a', params: ['x'] }, 'params'],
      [{ to, template: 'appointment_reminder', params: 'Dana' }, 'params'],
      [{ to, template: 'appointment_reminder', params: ['Dana', 5] }, 'params[1]'],
      [{ to, media: 'https://example.com/a.png' }, 'media'],
      [{ to, media: { type: 'video', url: 'https://example.com/a.mp4' } }, 'media.type'],
      [[], 'body'],
    ];
    for (const [body, param] of cases) {
      const r = await send(body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.error.param, JSON.stringify(body)).toBe(param);
    }
    const notJson = await send('{"to":');
    expect(notJson.status).toBe(400);
    expect(notJson.body.error.code).toBe('invalid_request');
    expect((await app.post('/v1/chat/messages?text=a', { to, text: 'a' }, write)).status).toBe(422);
  });

  it("the sandbox's test numbers: rejected, never delivered, read receipts off", async () => {
    const rejected = await send({ to: '050-000-0991', text: 'a' });
    const undelivered = await send({ to: '050-000-0992', text: 'a' });
    const unread = await send({ to: '050-000-0993', text: 'a' });
    await app.settle();
    expect(await getMessage(rejected.body.data.id)).toMatchObject({
      status: 'failed',
      failure_reason: REJECTION_REASON,
      timestamps: { sent_at: null, failed_at: expect.any(String) },
    });
    expect((await getMessage(undelivered.body.data.id)).status).toBe('sent');
    expect((await getMessage(unread.body.data.id)).status).toBe('delivered');
  });
});

describe('receipts', () => {
  it('are idempotent, may come in any order or twice; a terminal failure wins; each bumps updated_at', async () => {
    const r = await send({ to: newPhone(), text: 'a' });
    const id = r.body.data.id;
    await app.settle();
    const networkId = network().sent.at(-1)?.networkMessageId as string;
    const receipt = (status: string, at: string, failure: string | null = null) => {
      app.clock.set(at);
      return network().callback({
        type: 'receipt',
        network_message_id: networkId,
        clinic_phone: clinicPhone,
        status,
        failure_reason: failure,
        at,
      } as never);
    };
    const before = await getMessage(id);
    await receipt('read', '2026-11-01T11:00:00.000Z');
    const dup = await getMessage(id);
    expect(dup.timestamps.read_at).toBe(before.timestamps.read_at);
    expect(dup.updated_at).toBe('2026-11-01T11:00:00.000Z');
    await receipt('failed', '2026-11-01T12:00:00.000Z', 'Handset unreachable');
    const failed = await getMessage(id);
    expect(failed).toMatchObject({ status: 'failed', failure_reason: 'Handset unreachable' });
    await receipt('delivered', '2026-11-01T13:00:00.000Z');
    expect((await getMessage(id)).status).toBe('failed');
    // A receipt for a message the service never sent is acknowledged and ignored.
    const stray = await network().callback({
      type: 'receipt',
      network_message_id: 'unknown',
      clinic_phone: clinicPhone,
      status: 'sent',
      failure_reason: null,
      at: '2026-11-01T13:00:00Z',
    });
    expect(stray).toMatchObject({ status: 'ignored' });
  });
});

describe('Idempotency-Key', () => {
  it('the same key and body answer the same response and send once; another body is a 409', async () => {
    const to = newPhone();
    await app.settle();
    const before = network().sent.length;
    const key = { 'idempotency-key': `k-${to}` };
    const a = await send({ to, text: 'once' }, key);
    const b = await send({ text: 'once', to }, key);
    expect(a.status).toBe(202);
    expect(b.status).toBe(202);
    expect(b.body).toEqual(a.body);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    await app.settle();
    expect(network().sent.length).toBe(before + 1);
    const other = await send({ to, text: 'twice' }, key);
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('conflict');
    // After 24 hours the key is free again, and other expired keys are cleared as new ones come.
    await send({ to, text: 'another' }, { 'idempotency-key': `other-${to}` });
    app.clock.set('2026-11-02T10:00:01Z');
    expect((await send({ to, text: 'twice' }, key)).status).toBe(202);
    const [{ n }] = await app.orm.em
      .fork()
      .getConnection()
      .execute<{ n: number }[]>(
        `select count(*)::int as n from idempotency_key where created_at < '2026-11-01T10:00:01Z'`,
      );
    expect(n).toBe(0);
  });

  it('two concurrent requests with one key send once', async () => {
    const to = newPhone();
    await app.settle();
    const before = network().sent.length;
    const key = { 'idempotency-key': `c-${to}` };
    const results = await Promise.all([1, 2, 3].map(() => send({ to, text: 'concurrent' }, key)));
    expect(results.map((r) => r.status)).toEqual([202, 202, 202]);
    expect(new Set(results.map((r) => r.body.data.id)).size).toBe(1);
    await app.settle();
    expect(network().sent.length).toBe(before + 1);
  });

  it('a key whose first request never finished (its process stopped) is a 409 saying so, not run again', async () => {
    const to = newPhone();
    const key = { 'idempotency-key': `s-${to}` };
    expect((await send({ to, text: 'first' }, key)).status).toBe(202);
    // As a process that stopped after claiming the key leaves it: claimed, never answered.
    const sql = app.orm.em.fork().getConnection();
    await sql.execute(
      `update idempotency_key set status = null, response = null where key_hash = encode(sha256(convert_to(?, 'UTF8')), 'hex')`,
      [`s-${to}`],
    );
    await app.settle();
    const before = network().sent.length;
    app.clock.set('2026-11-01T10:01:00Z'); // inside the lease: still being processed, as far as anyone knows
    const waiting = await send({ to, text: 'first' }, key);
    expect(waiting.status).toBe(409);
    expect(waiting.body.error.message).toMatch(/still being processed/);
    app.clock.set('2026-11-01T10:05:00Z');
    const stopped = await send({ to, text: 'first' }, key);
    expect(stopped.status).toBe(409);
    expect(stopped.body.error.param).toBe('Idempotency-Key');
    expect(stopped.body.error.message).toMatch(/did not finish/);
    await app.settle();
    expect(network().sent.length).toBe(before);
  });

  it('a refused request frees its key; a bad key is a 422', async () => {
    const to = newPhone();
    const key = { 'idempotency-key': `r-${to}` };
    expect((await send({ to }, key)).status).toBe(422);
    expect((await send({ to, text: 'fixed' }, key)).status).toBe(202);
    expect((await send({ to, text: 'a' }, { 'idempotency-key': 'has space' })).body.error.param).toBe(
      'Idempotency-Key',
    );
  });
});

describe('reactions', () => {
  const react = (id: string, body: unknown) => app.post(`/v1/chat/messages/${id}/reaction`, body, write);

  it('a network that refuses or fails a reaction is a 422 or a 503, and nothing is recorded', async () => {
    const m = await inbound(newPhone());
    const sandbox = network();
    const react0 = sandbox.react.bind(sandbox);
    try {
      sandbox.react = async () => {
        throw new NetworkRefusal('reactions are off for this number');
      };
      const refused = await react(m.id, { emoji: '👍' });
      expect(refused.status).toBe(422);
      expect(refused.body.error).toMatchObject({ code: 'validation_failed', param: 'emoji' });
      sandbox.react = async () => {
        throw new Error('socket hang up');
      };
      const failed = await react(m.id, { emoji: '👍' });
      expect(failed.status).toBe(503);
      expect(failed.body.error.code).toBe('service_unavailable');
    } finally {
      sandbox.react = react0;
    }
    expect((await getMessage(m.id)).reactions.clinic).toBeNull();
  });

  it('two reactions at once leave the network and the API with the same emoji', async () => {
    const m = await inbound(newPhone());
    const sandbox = network();
    const react0 = sandbox.react.bind(sandbox);
    // The network takes the first reaction at once but answers it late; the second answers at once.
    let calls = 0;
    sandbox.react = async (r) => {
      await react0(r);
      if (calls++ === 0) await new Promise((resolve) => setTimeout(resolve, 300));
    };
    try {
      const first = react(m.id, { emoji: '👍' });
      await new Promise((resolve) => setTimeout(resolve, 50));
      await Promise.all([first, react(m.id, { emoji: '❤️' })]);
    } finally {
      sandbox.react = react0;
    }
    const shown = sandbox.reactions.at(-1)?.emoji;
    expect((await getMessage(m.id)).reactions.clinic).toBe(shown);
  });

  it("sets, replaces and withdraws the clinic's reaction on either direction", async () => {
    const phone = newPhone();
    const m = await inbound(phone);
    const r = await react(m.id, { emoji: '👍' });
    expect(r.status).toBe(200);
    expect(r.body.data.reactions).toEqual({ patient: null, clinic: '👍' });
    expect((await react(m.id, { emoji: '❤️' })).body.data.reactions.clinic).toBe('❤️');
    expect((await react(m.id, { emoji: null })).body.data.reactions.clinic).toBeNull();
    const out = await send({ to: phone, text: 'hi' });
    await app.settle();
    expect((await react(out.body.data.id, { emoji: '👨‍👩‍👧' })).body.data.reactions.clinic).toBe('👨‍👩‍👧');
    expect(network().reactions.at(-1)?.emoji).toBe('👨‍👩‍👧');
    // The patient's reaction comes through the callback.
    const networkId = network().sent.at(-1)?.networkMessageId as string;
    await network().patientReaction({ clinicPhone, from: phone, networkMessageId: networkId, emoji: '🙏' });
    expect((await getMessage(out.body.data.id)).reactions).toEqual({ patient: '🙏', clinic: '👨‍👩‍👧' });
  });

  it('422 for not one emoji, a message over 30 days old, or the patient silent for 24 hours; 404 for a bare number', async () => {
    const phone = newPhone();
    const m = await inbound(phone);
    for (const emoji of ['a', '👍👍', '👍 ', 5, '']) {
      const r = await react(m.id, { emoji });
      expect(r.status, String(emoji)).toBe(422);
      expect(r.body.error.param).toBe('emoji');
    }
    expect((await react(m.id, {})).body.error.param).toBe('emoji');
    expect((await react(m.id.replace('in_', ''), { emoji: '👍' })).status).toBe(404);
    expect((await react(m.id.replace('in_', 'out_'), { emoji: '👍' })).status).toBe(404);
    app.clock.set('2026-11-02T09:59:59.999Z');
    expect((await react(m.id, { emoji: '👍' })).status).toBe(200);
    app.clock.set('2026-11-02T10:00:00Z');
    const silent = await react(m.id, { emoji: '👍' });
    expect(silent.status).toBe(422);
    expect(silent.body.error.message).toMatch(/24 hours/);
    // The patient writes again 31 days later: the window is open, the first message too old.
    app.clock.set('2026-12-02T10:00:01Z');
    await inbound(phone, 'Me again');
    const old = await react(m.id, { emoji: '👍' });
    expect(old.status).toBe(422);
    expect(old.body.error.message).toMatch(/30 days/);
  });
});

describe('handled', () => {
  const mark = (id: string, body: unknown, key = write) =>
    app.post(`/v1/chat/conversations/${id}/handled`, body, key);

  it('takes a JSON boolean only; 404 for an unknown id; 422 when the clinic has it off; a new message unhandles', async () => {
    const phone = newPhone();
    const { conversation_id: id } = await inbound(phone);
    for (const handled of ['true', 1, null, undefined]) {
      const r = await mark(id, handled === undefined ? {} : { handled });
      expect(r.status, String(handled)).toBe(422);
      expect(r.body.error.param).toBe('handled');
    }
    const r = await mark(id, { handled: true });
    expect(r.status).toBe(200);
    expect(r.body.data.is_handled).toBe(true);
    expect(
      (await app.get(`/v1/chat/conversations?is_handled=true&phone=${local(phone)}`, read)).body.data,
    ).toHaveLength(1);
    expect((await mark('conv_99999999', { handled: true })).status).toBe(404);
    expect((await mark('pat_1', { handled: true })).status).toBe(404);
    await inbound(phone, 'One more thing');
    expect((await app.get(`/v1/chat/conversations/${id}`, read)).body.data.is_handled).toBe(false);

    const other = await app.clinicWithKey('veterinary', ['chat:write'], 'no handled-marking');
    const otherPhone = (await app.orm.em.fork().findOneOrFail(Clinic, other.clinicId)).phone as string;
    const conv = (await network().inbound({ clinicPhone: otherPhone, from: phone, text: 'x' })) as {
      conversation_id: string;
    };
    const off = await mark(conv.conversation_id, { handled: true }, other.key);
    expect(off.status).toBe(422);
    expect(off.body.error.message).toMatch(/handled-marking/);
  });
});

describe('incremental sync with updated_since', () => {
  it('misses no change when writes land between page fetches', async () => {
    const since = '2026-11-05T00:00:00Z';
    app.clock.set('2026-11-05T00:00:00Z');
    const phones = [newPhone(), newPhone(), newPhone(), newPhone()];
    const convs: string[] = [];
    for (const p of phones) convs.push((await inbound(p)).conversation_id);
    const seen = new Map<string, string>();
    const page = async (cursor?: string) => {
      const r = await app.get(
        `/v1/chat/conversations?updated_since=${since}&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        read,
      );
      expect(r.status).toBe(200);
      for (const c of r.body.data) seen.set(c.id, c.updated_at);
      return r.body.next_cursor as string | null;
    };
    let cursor = await page();
    // Between fetches: the first conversation (already read) changes, a new one appears.
    app.clock.set('2026-11-05T01:00:00Z');
    await app.post(`/v1/chat/conversations/${convs[0]}/handled`, { handled: true }, write);
    const late = await inbound(newPhone());
    while (cursor) {
      cursor = await page(cursor);
      app.clock.advance(1000);
    }
    expect([...seen.keys()]).toEqual(expect.arrayContaining([...convs, late.conversation_id]));
    expect(seen.get(convs[0])).toBe('2026-11-05T01:00:00.000Z');

    // Messages: a receipt on an older message moves it to the end of the sync order.
    const msgs = (await app.get(`/v1/chat/messages?updated_since=${since}&limit=100`, read)).body.data;
    const sent = await send({ to: phones[1], text: 'sync me' });
    await app.settle();
    const after = (await app.get(`/v1/chat/messages?updated_since=${since}&limit=100`, read)).body.data;
    expect(after.at(-1).id).toBe(sent.body.data.id);
    expect(after.length).toBe(msgs.length + 1);
  });
});

describe('reading', () => {
  it('checks every filter, naming a bad one', async () => {
    const bad: [string, string][] = [
      ['/v1/chat/messages?direction=sideways', 'direction'],
      ['/v1/chat/messages?type=gif', 'type'],
      ['/v1/chat/messages?phone=abc', 'phone'],
      ['/v1/chat/messages?from=yesterday', 'from'],
      ['/v1/chat/messages?to=2026-13-01', 'to'],
      ['/v1/chat/messages?from=2026-11-02&to=2026-11-01', 'to'],
      ['/v1/chat/messages?updated_since=2026-11-01T10:00:00', 'updated_since'],
      ['/v1/chat/messages?limit=101', 'limit'],
      ['/v1/chat/conversations?is_handled=yes', 'is_handled'],
      ['/v1/chat/conversations?updated_since=nope', 'updated_since'],
      ['/v1/chat/templates?sendable=maybe', 'sendable'],
    ];
    for (const [path, param] of bad) {
      const r = await app.get(path, read);
      expect(r.status, path).toBe(422);
      expect(r.body.error.param, path).toBe(param);
    }
  });

  it('filters messages by direction, type, phone and time; a bare number id is a 404', async () => {
    const phone = newPhone();
    app.clock.set('2026-11-10T08:00:00Z');
    const a = await inbound(phone, 'morning');
    app.clock.set('2026-11-10T09:00:00Z');
    const b = await send({ to: phone, text: 'reply' });
    const q = (s: string) => app.get(`/v1/chat/messages?phone=${local(phone)}${s}`, read);
    expect((await q('')).body.data.map((m: any) => m.id)).toEqual([b.body.data.id, a.id]);
    expect((await q('&direction=inbound')).body.data.map((m: any) => m.id)).toEqual([a.id]);
    expect((await q('&type=image')).body.data).toEqual([]);
    expect((await q('&from=2026-11-10T08:30:00Z')).body.data.map((m: any) => m.id)).toEqual([b.body.data.id]);
    expect((await q('&to=2026-11-10T09:00:00%2B00:00')).body.data.map((m: any) => m.id)).toEqual([a.id]);
    expect((await app.get(`/v1/chat/messages/${a.id.slice(3)}`, read)).status).toBe(404);
    const conv = await app.get(
      `/v1/chat/conversations/${a.conversation_id}/messages?direction=outbound`,
      read,
    );
    expect(conv.body.data.map((m: any) => m.id)).toEqual([b.body.data.id]);
  });

  it("a patient's messages need chat:read beside patients:read; an empty page when the patient has no phone", async () => {
    const fx = fixtures(app.orm, clinicId);
    const phone = newPhone();
    const withPhone = await fx.patient({ first: 'Has', last: 'Phone', phone: local(phone) });
    const without = await fx.patient({ first: 'No', last: 'Phone' });
    await inbound(phone);
    expect((await app.get(`/v1/patients/pat_${withPhone.id}/chat/messages`, read)).body.data).toHaveLength(1);
    expect((await app.get(`/v1/patients/pat_${without.id}/chat/messages`, read)).body).toEqual({
      data: [],
      next_cursor: null,
    });
    await send({ to: phone, text: 'reply' });
    const g = await app.gql(
      `{ patient(id: "pat_${withPhone.id}") { all: chatMessages { edges { node { id } } } inbound: chatMessages(direction: INBOUND) { edges { node { direction } } } } }`,
      {},
      read,
    );
    expect(g.body.data.patient.all.edges).toHaveLength(2);
    expect(g.body.data.patient.inbound.edges.map((e: any) => e.node.direction)).toEqual(['INBOUND']);
    // A type outside the set is refused by GraphQL itself (an enum); a bad time by the service,
    // naming the argument as the query wrote it.
    const bad = await app.gql(
      `{ patient(id: "pat_${without.id}") { chatMessages(type: GIF) { edges { node { id } } } } }`,
      {},
      read,
    );
    expect(bad.body.errors[0].extensions.code).toBe('invalid_request');
    expect(bad.body.errors[0].message).toMatch(/MessageType/);
    const badTime = await app.gql(
      `{ patient(id: "pat_${without.id}") { chatMessages(updatedSince: "nope") { edges { node { id } } } } }`,
      {},
      read,
    );
    expect(badTime.body.errors[0].extensions).toMatchObject({
      code: 'validation_failed',
      param: 'updatedSince',
    });
    expect(badTime.body.errors[0].message).toMatch(/^updatedSince /);
    // The patient's phone is read for them, whether or not the query selects it.
    // (patients() reads only what the query selects of a patient: here not its phone.)
    const noPhoneSelected = await app.gql(
      '{ patients(first: 1, query: "Has") { edges { node { id chatConversations { edges { node { patientPhone } } } } } } }',
      {},
      read,
    );
    expect(noPhoneSelected.body.data.patients.edges[0].node.chatConversations.edges).toEqual([
      { node: { patientPhone: local(phone) } },
    ]);
    const none = await app.gql(
      `{ patient(id: "pat_${without.id}") { chatConversations { edges { node { id } } } } }`,
      {},
      read,
    );
    expect(none.body.data.patient.chatConversations.edges).toEqual([]);
    const patientsOnly = await app.key(clinicId, ['patients:read']);
    const r = await app.get(`/v1/patients/pat_${withPhone.id}/chat/messages`, patientsOnly);
    expect(r.status).toBe(403);
    expect(r.body.error.required_scopes).toEqual(['chat:read']);
  });

  it('templates: every one listed, unsendable ones with their reason; sendable=true keeps the sendable', async () => {
    const all = (await app.get('/v1/chat/templates', read)).body.data;
    const sendable = (await app.get('/v1/chat/templates?sendable=true', read)).body.data;
    expect(all.length).toBeGreaterThan(sendable.length);
    expect(sendable.every((t: any) => t.sendable && t.not_sendable_reason === null)).toBe(true);
    expect(all.find((t: any) => t.name === 'spring_promotion')).toMatchObject({
      sendable: false,
      status: 'REJECTED',
      rejection_reason: expect.any(String),
      not_sendable_reason: expect.stringMatching(/not approved/),
    });
    expect(all.find((t: any) => t.name === 'appointment_confirmation_linked').not_sendable_reason).toMatch(
      /internal record/,
    );
  });

  it('chat:write and chat:read are separate: a write key cannot read, a read key cannot write', async () => {
    expect((await app.get('/v1/chat/messages', write)).status).toBe(403);
    expect((await app.post('/v1/chat/messages', { to: newPhone(), text: 'a' }, read)).status).toBe(403);
  });
});

describe('GraphQL', () => {
  it('a page of conversations with their messages costs a fixed number of statements (no N+1)', async () => {
    for (let i = 0; i < 6; i++) {
      const phone = newPhone();
      await inbound(phone, `hello ${i}`);
      await inbound(phone, `again ${i}`);
    }
    // Earlier tests' sends are done: their workers' statements are not this page's.
    await app.settle();
    const statements = async (n: number) => {
      const q = `{ conversations(first: ${n}) { edges { node { id messages(first: 2) { pageInfo { hasNextPage } edges { node { id text patients { id } } } } } } } }`;
      const before = app.queries.length;
      const r = await app.gql(q, {}, read);
      expect(r.body.errors).toBeUndefined();
      const pages = r.body.data.conversations.edges.map((e: any) => e.node.messages.edges.length);
      expect(pages.every((k: number) => k >= 1 && k <= 2)).toBe(true);
      return app.queries.slice(before).filter((x) => /\bselect\b/i.test(x)).length;
    };
    expect(await statements(6)).toBe(await statements(2));

    // A page of patients with their messages, likewise.
    const fx = fixtures(app.orm, clinicId);
    for (let i = 0; i < 4; i++) {
      const phone = newPhone();
      await fx.patient({ first: `P${i}`, last: 'Batch', phone: local(phone) });
      await inbound(phone, `from P${i}`);
    }
    const patientStatements = async (n: number) => {
      const before = app.queries.length;
      const r = await app.gql(
        `{ patients(first: ${n}, query: "Batch") { edges { node { id chatMessages(first: 2) { edges { node { id text } } } } } } }`,
        {},
        read,
      );
      expect(r.body.errors).toBeUndefined();
      const edges = r.body.data.patients.edges;
      expect(edges.length).toBe(n);
      for (const e of edges)
        expect(e.node.chatMessages.edges.map((m: any) => m.node.text)).toEqual([
          expect.stringMatching(/^from P\d$/),
        ]);
      return app.queries.slice(before).filter((x) => /\bselect\b/i.test(x)).length;
    };
    expect(await patientStatements(4)).toBe(await patientStatements(1));
    // The same page through the filtered path reads per conversation, and answers the same.
    const plain = await app.gql(
      '{ conversations(first: 3) { edges { node { messages(first: 2) { edges { node { id } } } } } } }',
      {},
      read,
    );
    const filtered = await app.gql(
      '{ conversations(first: 3) { edges { node { messages(first: 2, from: "2000-01-01") { edges { node { id } } } } } } }',
      {},
      read,
    );
    expect(filtered.body.data).toEqual(plain.body.data);
  });

  it('sandbox mutations play the patient: a message (opening the window) and a reaction', async () => {
    const phone = newPhone();
    const r = await app.gql(
      'mutation($from: String!) { sandboxInbound(input: { from: $from, text: "From the sandbox", name: "Sam" }) { message { id conversationId direction text } } }',
      { from: local(phone) },
      write,
    );
    const { id, conversationId: conversation_id, ...recorded } = r.body.data.sandboxInbound.message;
    expect(id).toMatch(/^in_/);
    expect(recorded).toEqual({ direction: 'INBOUND', text: 'From the sandbox' });
    const conv = (await app.get(`/v1/chat/conversations/${conversation_id}`, read)).body.data;
    expect(conv).toMatchObject({
      display_name: 'Sam',
      free_text_window_expires_at: '2026-11-02T10:00:00.000Z',
    });
    const out = await send({ to: phone, text: 'hello Sam' });
    await app.settle();
    const reply = await app.gql(
      `mutation { sandboxInbound(input: { from: "${phone}", text: "thanks", replyTo: "${out.body.data.id}" }) { message { id repliedToId } } }`,
      {},
      write,
    );
    const replied = reply.body.data.sandboxInbound.message;
    expect(replied.repliedToId).toBe(out.body.data.id);
    expect((await getMessage(replied.id)).replied_to_id).toBe(out.body.data.id);
    const reacted = await app.gql(
      `mutation { sandboxReact(input: { messageId: "${out.body.data.id}", emoji: "🙏" }) { message { id reactions { patient } } } }`,
      {},
      write,
    );
    expect(reacted.body.data.sandboxReact.message).toEqual({
      id: out.body.data.id,
      reactions: { patient: '🙏' },
    });
    expect((await getMessage(out.body.data.id)).reactions.patient).toBe('🙏');
    const bad = await app.gql(
      'mutation { sandboxInbound(input: { from: "abc", text: "x" }) { message { id } } }',
      {},
      write,
    );
    expect(bad.body.errors[0].extensions).toMatchObject({ code: 'validation_failed', param: 'input.from' });
    expect(bad.body.errors[0].message).toBe("input.from 'abc' is not a phone number.");
    // The patient side's own names (the CLI's --media-type) are the input's here.
    const media = await app.gql(
      `mutation { sandboxInbound(input: { from: "${phone}", mediaType: IMAGE }) { message { id } } }`,
      {},
      write,
    );
    expect(media.body.errors[0].extensions).toMatchObject({
      code: 'validation_failed',
      param: 'input.mediaUrl',
    });
    expect(media.body.errors[0].message).toBe('input.mediaUrl and input.mediaType go together.');
    // A media URL with a user name or password, refused as webhook URLs are (issue 34).
    const credentials = await app.gql(
      `mutation { sandboxInbound(input: { from: "${phone}", mediaType: IMAGE, mediaUrl: "ftp://u:p@example.com/a.png" }) { message { id } } }`,
      {},
      write,
    );
    expect(credentials.body.errors[0].extensions).toMatchObject({
      code: 'validation_failed',
      param: 'input.mediaUrl',
    });
    expect(credentials.body.errors[0].message).toBe('input.mediaUrl must not carry a user name or password.');
  });

  it('sends, reacts and marks handled with the same rules and error codes', async () => {
    const phone = newPhone();
    const m = await inbound(phone);
    const sent = await app.gql(
      'mutation($to: String!) { sendMessage(input: { to: $to, text: "via graphql" }) { message { id status } meta { deliveryMode caption { id } } } }',
      { to: phone },
      write,
    );
    expect(sent.body.data.sendMessage).toMatchObject({
      message: { status: 'QUEUED' },
      meta: { deliveryMode: 'FREE_TEXT', caption: null },
    });
    const both = await app.gql(
      'mutation($to: String!) { sendMessage(input: { to: $to, text: "a", template: "b" }) { message { id } } }',
      { to: phone },
      write,
    );
    expect(both.body.errors[0].extensions).toMatchObject({
      code: 'validation_failed',
      param: 'input.template',
    });
    // The typed input: a media type outside the set, or no `to`, is GraphQL's own refusal.
    for (const input of [
      `{ to: "${phone}", media: { type: AUDIO, url: "https://x.test/a.ogg" } }`,
      '{ text: "a" }',
    ]) {
      const refused = await app.gql(
        `mutation { sendMessage(input: ${input}) { message { id } } }`,
        {},
        write,
      );
      expect(refused.body.errors[0].extensions.code, input).toBe('invalid_request');
    }
    const reacted = await app.gql(
      `mutation { reactToMessage(input: { id: "${m.id}", emoji: "👍" }) { message { reactions { clinic } } } }`,
      {},
      write,
    );
    expect(reacted.body.data.reactToMessage.message.reactions.clinic).toBe('👍');
    const handled = await app.gql(
      `mutation { markConversationHandled(input: { id: "${m.conversation_id}", handled: true }) { conversation { isHandled } } }`,
      {},
      write,
    );
    expect(handled.body.data.markConversationHandled.conversation.isHandled).toBe(true);
    const forbidden = await app.gql(
      `mutation { markConversationHandled(input: { id: "${m.conversation_id}", handled: true }) { conversation { id } } }`,
      {},
      read,
    );
    expect(forbidden.body.errors[0].extensions.code).toBe('forbidden');
    const q = await app.gql(
      `{ conversations(phone: "${local(phone)}") { edges { node { id messages(first: 10) { edges { node { id status } } } } } } }`,
      {},
      read,
    );
    expect(q.body.data.conversations.edges[0].node.messages.edges).toHaveLength(2);
    // The filters in GraphQL's names: camelCase, the closed sets as enums, REST's values behind them.
    const filtered = await app.gql(
      `{ handled: conversations(phone: "${local(phone)}", isHandled: true, updatedSince: "2000-01-01T00:00:00Z") { edges { node { id isHandled } } }
         unhandled: conversations(phone: "${local(phone)}", isHandled: false) { edges { node { id } } }
         messages(phone: "${local(phone)}", direction: OUTBOUND, type: TEXT) { edges { node { id direction type status } } }
         images: messages(phone: "${local(phone)}", type: IMAGE) { edges { node { id } } } }`,
      {},
      read,
    );
    expect(filtered.body.errors).toBeUndefined();
    expect(filtered.body.data.handled.edges).toEqual([{ node: { id: m.conversation_id, isHandled: true } }]);
    expect(filtered.body.data.unhandled.edges).toEqual([]);
    expect(filtered.body.data.messages.edges).toEqual([
      {
        node: {
          id: sent.body.data.sendMessage.message.id,
          direction: 'OUTBOUND',
          type: 'TEXT',
          status: expect.stringMatching(/^(QUEUED|SENT|DELIVERED|READ)$/),
        },
      },
    ]);
    expect(filtered.body.data.images.edges).toEqual([]);
    const badSince = await app.gql('{ conversations(updatedSince: "nope") { edges { cursor } } }', {}, read);
    expect(badSince.body.errors[0].extensions).toMatchObject({
      code: 'validation_failed',
      param: 'updatedSince',
    });
  });

  it('the sandbox mutations and their types are in every served schema, and in schema.graphql', async () => {
    const names = (list: { name: string }[] | undefined) => (list ?? []).map((x) => x.name);
    const SANDBOX_TYPES = [
      'SandboxInboundInput',
      'SandboxInboundPayload',
      'SandboxReactInput',
      'SandboxReactPayload',
      'InboundMediaType',
    ];
    // Every service runs test clinics' sandbox (docs/test-mode.md): its /graphql has them, and a
    // live clinic's key is refused when it calls them (test/test-mode.test.ts).
    const served = await app.gql(
      '{ __schema { mutationType { fields { name } } types { name } } }',
      {},
      read,
    );
    expect(names(served.body.data.__schema.mutationType.fields)).toEqual(
      expect.arrayContaining(['sandboxInbound', 'sandboxReact', 'sendMessage']),
    );
    expect(names(served.body.data.__schema.types)).toEqual(expect.arrayContaining(SANDBOX_TYPES));
    const committed = readFileSync(new URL('../schema.graphql', import.meta.url), 'utf8');
    for (const name of ['sandboxInbound', 'sandboxReact', ...SANDBOX_TYPES])
      expect(committed, name).toMatch(new RegExp(`\\b${name}\\b`));
    expect(committed).toMatch(/\bsendMessage\([^)]*\binput: SendMessageInput!\s*\): SendMessagePayload!/);
  });
});

describe("the clinics' shared read handles", () => {
  it('hold no entities after every route above has read and written (lean reads only)', async () => {
    const handles = clinicReaders(app.orm.em);
    expect(handles.length).toBeGreaterThan(0);
    for (const em of handles) expect(em.getUnitOfWork().getIdentityMap().values()).toEqual([]);
  });
});
