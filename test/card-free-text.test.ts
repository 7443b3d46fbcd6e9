import { createHash } from 'node:crypto';
import { pino } from 'pino';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { logger } from '../src/lib/logger.ts';
import { camelOf, renameKeys } from '../src/lib/names.ts';
import { allWrites } from '../src/services/all-writes.ts';
import { noCardNumber } from '../src/services/write-input.ts';
import { fixtures } from './fixtures.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * The card-number rule outside payment bodies (issue 26; docs/decisions.md, "Card numbers"): no
 * full card number in a log line (a URL path), at rest (an Idempotency-Key), in an error message
 * (GraphQL's coercion error quoting a security code), or in any free-text field of a write (a
 * 422 naming the field; nothing stored, no event). A long number that is not a card number (an
 * order or phone number) is still taken.
 */
let app: TestApp;
let clinicId: number;
let key: string;
let ids: { patient: string; branch: string; provider: string; type: string; menuItem: string };
const PAN = '4111111111111111';
const NOTE = `card ${PAN} cvv 8531`;

beforeAll(async () => {
  app = await startTestApp();
  const c = await app.clinicWithKey('dental', [
    'patients:read',
    'appointments:write',
    'appointments:read',
    'treatments:write',
    'treatments:read',
    'calls:write',
    'calls:read',
    'payments:write',
  ]);
  clinicId = c.clinicId;
  key = c.key;
  const fx = fixtures(app.orm, clinicId);
  const cat = await fx.catalog();
  const patient = await fx.patient({ first: 'Dana', last: 'Cohen', phone: '0501234567' });
  ids = {
    patient: `pat_${patient.id}`,
    branch: `br_${cat.branch.id}`,
    provider: `prv_${cat.provider.id}`,
    type: `apt_${cat.type.id}`,
    menuItem: `trm_${cat.menuItem.id}`,
  };
});

beforeEach(() => app.clock.set('2026-11-20T08:00:00Z'));

const sql = <T>(q: string, params: unknown[] = []) =>
  app.orm.em.fork().getConnection().execute<T[]>(q, params);

/** Every line the service's logger writes while `work` runs, at its most verbose level, as written. */
async function logLinesOf(work: () => Promise<void>): Promise<string[]> {
  const stream = (logger as any)[pino.symbols.streamSym];
  const write = stream.write;
  const level = logger.level;
  const lines: string[] = [];
  stream.write = (line: string) => lines.push(line) > 0;
  logger.level = 'trace';
  try {
    await work();
  } finally {
    stream.write = write;
    logger.level = level;
  }
  return lines;
}

/** Every row of the clinic's tables that could hold a note, and every event, mentioning the number. */
async function storedAnywhere(digits: string): Promise<number> {
  const [row] = await sql<{ n: number }>(
    `select (select count(*) from "appointment" where "clinic_id" = ? and ("note" like ? or "cancellation_reason" like ?))
          + (select count(*) from "treatment" where "clinic_id" = ? and ("note" like ? or "cancellation_reason" like ? or "description" like ?))
          + (select count(*) from "call" where "clinic_id" = ? and "note" like ?)
          + (select count(*) from "event" where "clinic_id" = ? and "data"::text like ?) as n`,
    [
      clinicId,
      `%${digits}%`,
      `%${digits}%`,
      clinicId,
      `%${digits}%`,
      `%${digits}%`,
      `%${digits}%`,
      clinicId,
      `%${digits}%`,
      clinicId,
      `%${digits}%`,
    ],
  );
  return Number(row.n);
}

let slot = 0;
const nextStart = () => new Date(Date.UTC(2026, 11, 1, 6) + ++slot * 3600_000).toISOString();
const bookBody = (extra: Record<string, unknown> = {}) => ({
  patient_id: ids.patient,
  branch_id: ids.branch,
  provider_id: ids.provider,
  type_id: ids.type,
  start: nextStart(),
  ...extra,
});
const callBody = (extra: Record<string, unknown> = {}) => ({
  direction: 'inbound',
  from: '050-123-4567',
  to: '03-555-0100',
  started_at: '2026-11-19T09:30:00+02:00',
  duration: 60,
  answered: true,
  recorded: false,
  ...extra,
});
const treatmentBody = (extra: Record<string, unknown> = {}) => ({
  treatment_id: ids.menuItem,
  performed_at: '2026-11-19T09:30:00+02:00',
  ...extra,
});

/** A REST body as a GraphQL input: camelCase fields, a direction as its enum name. */
const inputOf = (body: Record<string, unknown>) => {
  const input = renameKeys(body, camelOf) as Record<string, unknown>;
  return typeof input.direction === 'string' ? { ...input, direction: input.direction.toUpperCase() } : input;
};

function expectRefused(r: { status: number; body: any }, param: string, what: string) {
  expect(r.status, what).toBe(422);
  expect(r.body.error, what).toMatchObject({ code: 'validation_failed', param });
  expect(r.body.error.message, what).toMatch(/card number.*never stored.*nothing was written/);
  expect(JSON.stringify(r.body), what).not.toContain(PAN);
  expect(JSON.stringify(r.body), what).not.toContain('8531');
}

describe('logs, keys and error messages', () => {
  it('a card number in a URL path is not written to the request log', async () => {
    const lines = await logLinesOf(async () => {
      await app.get(`/v1/patients/${PAN}`, key);
      await app.get(`/v1/patients/4111-1111-1111-1111?cvv=853`, key);
    });
    const requests = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
    expect(requests.map((l) => l.route)).toEqual([
      '/v1/patients/[card number removed]',
      '/v1/patients/[card number removed]',
    ]);
    expect(lines.join('\n')).not.toMatch(/4111.?1111.?1111.?1111/);
    // Numbers of the line (its time, its duration) are left as they are.
    expect(typeof requests[0].time).toBe('number');
  });

  it('an Idempotency-Key is kept as its SHA-256, never as sent, and still replays', async () => {
    const body = bookBody({ note: 'Retry me' });
    const first = await app.post('/v1/appointments', body, key, { 'idempotency-key': PAN });
    expect(first.status).toBe(201);
    const again = await app.post('/v1/appointments', body, key, { 'idempotency-key': PAN });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data.id).toBe(first.body.data.id);
    const rows = await sql<Record<string, unknown>>(`select * from "idempotency_key" where "clinic_id" = ?`, [
      clinicId,
    ]);
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(PAN);
    expect(rows[0].key_hash).toBe(createHash('sha256').update(PAN).digest('hex'));
    // The same key with another body: the 409 does not repeat the key either.
    const other = await app.post('/v1/appointments', bookBody(), key, { 'idempotency-key': PAN });
    expect(other.status).toBe(409);
    expect(JSON.stringify(other.body)).not.toContain(PAN);
  });

  it("GraphQL's coercion error does not echo a security code or a card number", async () => {
    let r: any;
    const lines = await logLinesOf(async () => {
      r = await app.gql(
        `mutation($input: RecordPaymentInput!) { recordPayment(input: $input) { payment { id } } }`,
        {
          input: {
            id: ids.patient,
            amount: 5,
            method: { type: 'CARD', card: { cvv: '8531', number: PAN, last4: '1111' } },
          },
        },
        key,
      );
    });
    expect(r.body.errors?.length).toBeGreaterThan(0);
    expect(r.body.errors[0].message).toContain('cvv');
    expect(JSON.stringify(r.body)).not.toContain('8531');
    expect(JSON.stringify(r.body)).not.toContain(PAN);
    expect(lines.join('\n')).not.toContain('8531');
    // A card number and a security code as the argument of a field: the same.
    const card = await app.gql(
      `mutation($card: String!) { cancelAppointment(input: { id: $card, reason: 5 }) { appointment { id } } }`,
      { card: `${PAN} cvv 8531` },
      key,
    );
    expect(card.body.errors?.length).toBeGreaterThan(0);
    expect(JSON.stringify(card.body)).not.toContain(PAN);
  });
});

describe('free-text fields', () => {
  it('a note with a card number is refused on appointments, treatments and calls over REST; nothing stored or sent', async () => {
    const booked = await app.post('/v1/appointments', bookBody(), key);
    const treated = await app.post(`/v1/patients/${ids.patient}/treatments`, treatmentBody(), key);
    const called = await app.post('/v1/calls', callBody(), key);
    expect([booked.status, treated.status, called.status]).toEqual([201, 201, 201]);
    const cases: [string, string, string, Record<string, unknown>, string][] = [
      ['POST', '/v1/appointments', 'book', bookBody({ note: NOTE }), 'note'],
      ['PATCH', `/v1/appointments/${booked.body.data.id}`, 'change', { note: NOTE }, 'note'],
      ['POST', `/v1/appointments/${booked.body.data.id}/cancel`, 'cancel', { reason: NOTE }, 'reason'],
      ['POST', `/v1/patients/${ids.patient}/treatments`, 'treat', treatmentBody({ note: NOTE }), 'note'],
      [
        'POST',
        `/v1/patients/${ids.patient}/treatments`,
        'describe',
        treatmentBody({ description: NOTE }),
        'description',
      ],
      ['PATCH', `/v1/treatments/${treated.body.data.id}`, 'change', { note: '4111 1111 1111 1111' }, 'note'],
      ['POST', '/v1/calls', 'report', callBody({ note: NOTE }), 'note'],
      ['PATCH', `/v1/calls/${called.body.data.id}`, 'note', { note: NOTE }, 'note'],
    ];
    for (const [method, path, what, body, param] of cases)
      expectRefused(await app.send(method, path, body, key), param, `${what} ${path}`);
    expect(await storedAnywhere('1111')).toBe(0);
  });

  it('and over GraphQL', async () => {
    const book = await app.gql(
      `mutation($input: CreateAppointmentInput!) { createAppointment(input: $input) { appointment { id } } }`,
      { input: inputOf(bookBody({ note: NOTE })) },
      key,
    );
    const treat = await app.gql(
      `mutation($input: CreateTreatmentInput!) { createTreatment(input: $input) { treatment { id } } }`,
      { input: { id: ids.patient, ...inputOf(treatmentBody({ note: NOTE })) } },
      key,
    );
    const call = await app.gql(
      `mutation($input: CreateCallInput!) { createCall(input: $input) { call { id } } }`,
      { input: inputOf(callBody({ note: NOTE })) },
      key,
    );
    for (const [what, r] of Object.entries({ book, treat, call })) {
      expect(r.body.errors?.[0]?.extensions, what).toMatchObject({
        code: 'validation_failed',
        param: 'input.note',
      });
      expect(r.body.errors[0].message, what).toMatch(/card number.*never stored/);
      expect(JSON.stringify(r.body), what).not.toContain(PAN);
    }
    expect(await storedAnywhere('1111')).toBe(0);
  });

  it('outbound chat text is free text too: a send holding a card number is refused', async () => {
    const chat = await app.key(clinicId, ['chat:write']);
    for (const [body, param] of [
      [{ to: '0501234567', text: NOTE }, 'text'],
      [{ to: '0501234567', template: 'reminder', params: ['Dana', '4111 1111 1111 1111'] }, 'params[1]'],
    ] as const) {
      const r = await app.post('/v1/chat/messages', body, chat);
      expect(r.status, param).toBe(422);
      expect(r.body.error, param).toMatchObject({ code: 'validation_failed', param });
      expect(r.body.error.message).toMatch(/card number.*never stored/);
    }
    const [row] = await sql<{ n: number }>(
      `select count(*)::int as n from "message" where "clinic_id" = ? and "text"::text like '%1111%'`,
      [clinicId],
    );
    expect(row.n).toBe(0);
  });

  it('a long number that is not a card number (an order or phone number) is taken', async () => {
    const note = 'order 4111111111111112, call back on +972 50 123 4567, teeth 18 17 16 15 14 13 12 11';
    const booked = await app.post('/v1/appointments', bookBody({ note }), key);
    expect(booked.status).toBe(201);
    expect(booked.body.data.note).toBe(note);
    const treated = await app.post(`/v1/patients/${ids.patient}/treatments`, treatmentBody({ note }), key);
    expect(treated.status).toBe(201);
    const called = await app.post('/v1/calls', callBody({ note }), key);
    expect(called.status, JSON.stringify(called.body)).toBe(201);
    expect(await storedAnywhere('4111111111111112')).toBeGreaterThan(0);
  });

  it('every free string field of every write carries the check, so a new one cannot forget it', () => {
    // Strings someone issued, not free text, each with its reason (write-input.ts `identifier`).
    const notFreeText = new Set([
      // National id numbers: South Africa's are 13 Luhn-valid digits by design.
      'createPatient.id_number',
      'updatePatient.id_number',
      // Closed vocabularies: an ISO 4217 code, one emoji.
      'recordPayment.currency',
      'reactToMessage.emoji',
      // A presigned link the service downloads once and never stores (it keeps its own copy).
      'addCallRecording.url',
      'sendMessage.media.url',
      // A phone number: the send's own check (send-input.ts) reads it as one or refuses it.
      'sendMessage.to',
    ]);
    const unchecked: string[] = [];
    const walk = (s: any, path: string) => {
      if (s instanceof z.ZodObject) for (const [k, v] of Object.entries(s.shape)) walk(v, `${path}.${k}`);
      else if (s instanceof z.ZodArray) walk(s.element, path);
      else if (s instanceof z.ZodOptional || s instanceof z.ZodNullable || s instanceof z.ZodDefault)
        walk(s.unwrap(), path);
      // A string read into something else (an id, a time) is not kept as text.
      else if (s instanceof z.ZodPipe) walk(s.def.out, path);
      else if (s instanceof z.ZodString && s.constructor === z.ZodString) {
        const checks = (s.def.checks ?? []).map((c: any) => c._zod.def);
        // A pattern or a declared format (a date): not free text.
        const patterned = checks.some((c: any) => c.check === 'string_format') || s.meta()?.format;
        const carries = checks.some((c: any) => c.check === 'custom' && c.fn === noCardNumber);
        if (!carries && !patterned && !notFreeText.has(path.slice(1))) unchecked.push(path.slice(1));
      }
    };
    for (const op of allWrites()) walk(op.input, `.${op.name}`);
    expect(unchecked).toEqual([]);
  });
});
