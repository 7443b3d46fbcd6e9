import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Clinic } from '../src/entities/index.ts';
import { signBody } from '../src/lib/signing.ts';
import { NETWORK_SECRET, startTestApp, type TestApp } from './helpers.ts';
import { png, serve, type TestServer } from './media-files.ts';

/**
 * The network callback answers every signed body with a 2xx or a 4xx, once (docs/chat.md, The
 * callback): copies delivered at once record one message, what the database cannot store is a
 * 422 rather than a 5xx the network would retry for a day, and replays change nothing.
 */
let app: TestApp;
let read: string;
let clinicPhone: string;
let otherClinicPhone: string;
let slowMedia: TestServer;
let mediaRequests = 0;
let n = 0;

beforeAll(async () => {
  app = await startTestApp();
  const c = await app.clinicWithKey('dental', ['chat:read']);
  read = c.key;
  const other = await app.clinicWithKey('dental', ['chat:read']);
  const em = app.orm.em.fork();
  clinicPhone = (await em.findOneOrFail(Clinic, c.clinicId)).phone as string;
  otherClinicPhone = (await em.findOneOrFail(Clinic, other.clinicId)).phone as string;
  // A media server slow enough that three copies of one callback all pass the first duplicate check.
  slowMedia = await serve(async (_req, res) => {
    mediaRequests++;
    await sleep(300);
    res.writeHead(200, { 'content-type': 'image/png' });
    res.end(png());
  });
});

beforeEach(() => {
  app.clock.set('2026-11-01T10:00:00Z');
});

const newPhone = () => `+97252${String(1000000 + ++n * 13)}`;

/** Posts a signed body as the network would, the body given as text or as an object. */
async function callback(event: unknown) {
  const body = typeof event === 'string' ? event : JSON.stringify(event);
  return app.post('/hooks/network', body, null, { 'x-service-signature': signBody(NETWORK_SECRET, body) });
}

function inboundEvent(from: string, extra: Record<string, unknown> = {}) {
  return {
    type: 'message.inbound',
    network_message_id: `in_${from}_${++n}`,
    clinic_phone: clinicPhone,
    from,
    profile_name: null,
    message_type: 'text',
    text: 'hello',
    media: null,
    contacts: null,
    reply_to_network_message_id: null,
    at: '2026-11-01T10:00:00Z',
    ...extra,
  };
}

const messagesOf = async (phone: string) =>
  (await app.get(`/v1/chat/messages?phone=${encodeURIComponent(phone)}`, read)).body.data as any[];

describe('copies of one callback', () => {
  it('sent at once (media download widening the gap) record one message', async () => {
    const from = newPhone();
    const event = inboundEvent(from, {
      message_type: 'image',
      text: null,
      media: { url: `${slowMedia.url}/scan.png`, mime_type: 'image/png' },
    });
    const before = mediaRequests;
    const answers = await Promise.all([callback(event), callback(event), callback(event)]);
    // All three copies passed the check before the download: the race was real.
    expect(mediaRequests - before).toBe(3);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    const statuses = answers.map((a) => a.body.status).sort();
    expect(statuses).toEqual(['duplicate', 'duplicate', 'recorded']);
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    expect(await messagesOf(from)).toHaveLength(1);
  });

  it('are unique per clinic in the database, not only by the check', async () => {
    const em = app.orm.em.fork();
    const [row] = await em
      .getConnection()
      .execute<{ indexdef: string }[]>(
        `select indexdef from pg_indexes where tablename = 'message' and indexdef like '%UNIQUE%network_message_id%'`,
      );
    expect(row?.indexdef).toMatch(/\(clinic_id, network_message_id\)/);
  });
});

describe('what PostgreSQL cannot store is a 422', () => {
  it('a NUL character in text or profile_name', async () => {
    const from = newPhone();
    for (const extra of [{ text: 'a\u0000b' }, { profile_name: 'Dana\u0000' }]) {
      const r = await callback(inboundEvent(from, extra));
      expect(r.status).toBe(422);
      expect(r.body.error.message).toMatch(/U\+0000/);
    }
    expect(await messagesOf(from)).toEqual([]);
  });

  it('every field at its longest is stored; one character more is a 422', async () => {
    const from = newPhone();
    const long = (c: string, length: number) => c.repeat(length);
    const inbound = await callback(
      inboundEvent(from, {
        network_message_id: `${from}${long('x', 200 - from.length)}`,
        profile_name: long('p', 200),
        text: long('t', 65_536),
        reply_to_network_message_id: long('r', 200),
      }),
    );
    expect(inbound.status).toBe(200);
    expect(inbound.body.status).toBe('recorded');
    const echo = await callback({
      type: 'message.echo',
      network_message_id: long('e', 200),
      clinic_phone: clinicPhone,
      to: from,
      message_type: 'text',
      text: long('t', 65_536),
      media: null,
      at: '2026-11-01T10:00:00Z',
    });
    expect(echo.body.status).toBe('recorded');
    const reaction = await callback({
      type: 'reaction',
      network_message_id: `${from}${long('x', 200 - from.length)}`,
      clinic_phone: clinicPhone,
      from,
      emoji: long('👍', 32),
      at: '2026-11-01T10:00:01Z',
    });
    expect(reaction.body.status).toBe('recorded');
    const receipt = (reason: string) =>
      callback({
        type: 'receipt',
        network_message_id: long('e', 200),
        clinic_phone: clinicPhone,
        status: 'failed',
        failure_reason: reason,
        at: '2026-11-01T10:00:02Z',
      });
    const tooLong = await receipt(long('f', 1001));
    expect(tooLong.status).toBe(422);
    expect(tooLong.body.error.message).toMatch(/^failure_reason:/);
    const failed = await receipt(long('f', 1000));
    expect(failed.body.status).toBe('recorded');
    const m = (await app.get(`/v1/chat/messages/${failed.body.id}`, read)).body.data;
    expect(m.failure_reason).toHaveLength(1000);
  });

  it('JSON nested 200,000 levels deep: refused before anything recurses over it', async () => {
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    const r = await callback(`{"type":"reaction","x":${deep}}`);
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/nested deeper than 32/);
  });
});

describe('time and replays', () => {
  it('an `at` more than five minutes ahead is a 422; a few minutes of clock skew are taken', async () => {
    const from = newPhone();
    const far = await callback(inboundEvent(from, { at: '9999-12-31T23:59:59Z' }));
    expect(far.status).toBe(422);
    expect(far.body.error.message).toMatch(/^at: /);
    const skewed = await callback(inboundEvent(from, { at: '2026-11-01T10:04:00Z' }));
    expect(skewed.body.status).toBe('recorded');
    expect(await messagesOf(from)).toHaveLength(1);
  });

  it('a replayed older reaction does not undo a newer one', async () => {
    const from = newPhone();
    const message = inboundEvent(from);
    const { body } = await callback(message);
    const reaction = (emoji: string | null, at: string) => ({
      type: 'reaction',
      network_message_id: message.network_message_id,
      clinic_phone: clinicPhone,
      from,
      emoji,
      at,
    });
    const thumbs = reaction('👍', '2026-11-01T10:01:00Z');
    expect((await callback(thumbs)).body.status).toBe('recorded');
    expect((await callback(reaction('❤️', '2026-11-01T10:02:00Z'))).body.status).toBe('recorded');
    const replay = await callback(thumbs);
    expect(replay.status).toBe(200);
    expect(replay.body.status).toBe('ignored');
    const reactionNow = async () =>
      (await app.get(`/v1/chat/messages/${body.id}`, read)).body.data.reactions.patient;
    expect(await reactionNow()).toBe('❤️');
    // A withdrawal is ordered the same way.
    expect((await callback(reaction(null, '2026-11-01T10:03:00Z'))).body.status).toBe('recorded');
    expect((await callback(reaction('❤️', '2026-11-01T10:02:00Z'))).body.status).toBe('ignored');
    expect(await reactionNow()).toBe(null);
  });

  it("a reaction from a number that is not the message's patient is refused", async () => {
    const from = newPhone();
    const message = inboundEvent(from);
    const { body } = await callback(message);
    const r = await callback({
      type: 'reaction',
      network_message_id: message.network_message_id,
      clinic_phone: clinicPhone,
      from: newPhone(),
      emoji: '👎',
      at: '2026-11-01T10:01:00Z',
    });
    expect(r.status).toBe(422);
    expect(r.body.error.param).toBe('from');
    expect((await app.get(`/v1/chat/messages/${body.id}`, read)).body.data.reactions.patient).toBe(null);
  });

  it('a receipt is looked up within the clinic it names, never across clinics', async () => {
    const from = newPhone();
    const echo = {
      type: 'message.echo',
      network_message_id: `echo_${from}`,
      clinic_phone: clinicPhone,
      to: from,
      message_type: 'text',
      text: 'sent from the clinic phone',
      media: null,
      at: '2026-11-01T10:00:00Z',
    };
    const { body } = await callback(echo);
    const receipt = (phone: string | undefined) => ({
      type: 'receipt',
      network_message_id: echo.network_message_id,
      ...(phone ? { clinic_phone: phone } : {}),
      status: 'read',
      failure_reason: null,
      at: '2026-11-01T10:01:00Z',
    });
    const elsewhere = await callback(receipt(otherClinicPhone));
    expect(elsewhere.body.status).toBe('ignored');
    expect((await callback(receipt(undefined))).status).toBe(422);
    const readAt = async () =>
      (await app.get(`/v1/chat/messages/${body.id}`, read)).body.data.timestamps.read_at;
    expect(await readAt()).toBe(null);
    expect((await callback(receipt(clinicPhone))).body.status).toBe('recorded');
    expect(await readAt()).toBe('2026-11-01T10:01:00.000Z');
    // A receipt names an outbound message: the patient's own message gets none.
    const inbound = inboundEvent(from);
    await callback(inbound);
    const stray = await callback({ ...receipt(clinicPhone), network_message_id: inbound.network_message_id });
    expect(stray.body.status).toBe('ignored');
  });
});
