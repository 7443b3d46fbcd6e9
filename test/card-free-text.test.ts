import { createHash } from 'node:crypto';
import { pino } from 'pino';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { writeScopes } from '../src/auth/scopes.ts';
import { seedDemo } from '../src/demo/seed-demo.ts';
import { entityNamed } from '../src/entities/index.ts';
import { kindOfId, prefixes, toId } from '../src/lib/ids.ts';
import { logger } from '../src/lib/logger.ts';
import { camelOf, renameKeys } from '../src/lib/names.ts';
import { restRoutes } from '../src/rest/routes.ts';
import { allWrites } from '../src/services/all-writes.ts';
import { noCardNumber } from '../src/services/write-input.ts';
import { restFieldOf, type WriteOperation } from '../src/services/writes.ts';
import { cardForms, showsCard } from './card-forms.ts';
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

/**
 * Issue 34: every way of writing a card number (test/card-forms.ts) in every free-text field of
 * every write (each field the write definitions check, found by walking their body definitions),
 * over real HTTP at the demo's clinics: each a 422 naming the field, with the write's own example
 * body around it, so that without the check most writes go through (before this issue they did,
 * and some 14,700 rows showed the card's digits). Afterwards no row
 * of any table (records, events, idempotency answers, chat messages and previews, webhook
 * subscriptions, queued jobs) and no log line shows the card's digits.
 */
describe('every form of a card number in every free-text field', () => {
  let demo: { dental: number; vet: number };
  let writers: { dental: string; vet: string; chat: string; reader: string };
  const firstIds: Record<string, Record<string, string>> = {};

  beforeAll(async () => {
    const seeded = await seedDemo(app.orm.em.fork(), { now: app.clock.now() });
    demo = {
      dental: Number(seeded.keys.readAll.clinic_id.split('_')[1]),
      vet: Number(seeded.keys.vetReadAll.clinic_id.split('_')[1]),
    };
    const scopes = [...writeScopes, 'vaccines:read', 'measurements:read', 'webhooks:manage'];
    writers = {
      dental: await app.key(demo.dental, scopes),
      vet: await app.key(demo.vet, scopes),
      chat: seeded.keys.chatWrite.key,
      reader: seeded.keys.readAll.key,
    };
    // The demo has no webhook subscription: one to change.
    const hook = await app.post('/v1/webhooks', { url: 'https://hooks.example.com/cards' }, writers.dental);
    expect(hook.status).toBe(201);
    for (const kind of ['dental', 'vet'] as const) firstIds[kind] = await idsAt(demo[kind]);
  }, 60_000);

  /** The first id of every kind at a clinic. */
  async function idsAt(clinic: number): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const kind of Object.keys(prefixes) as (keyof typeof prefixes)[]) {
      let meta: any;
      try {
        meta = app.orm.em.getMetadata(entityNamed(kind));
      } catch {
        continue;
      }
      if (!meta?.properties?.clinic) continue;
      const [row] = await sql<{ id: number | null }>(
        `select min("id") as "id" from "${meta.tableName}" where "clinic_id" = ?`,
        [clinic],
      );
      if (row?.id) out[kind] = toId(kind, row.id);
    }
    return out;
  }

  const kindOf = (op: WriteOperation) =>
    op.clinicKinds && !op.clinicKinds.includes('dental') ? ('vet' as const) : ('dental' as const);
  const writerOf = (op: WriteOperation) =>
    op.scopes.includes('chat:write') ? writers.chat : writers[kindOf(op)];

  /** A write's example body with the clinic's own ids, and a booking time of its own. */
  function exampleOf(op: WriteOperation): Record<string, unknown> {
    const ids = firstIds[kindOf(op)];
    const swap = (v: unknown, key?: string): unknown => {
      if (Array.isArray(v)) return v.map((x) => swap(x));
      if (v && typeof v === 'object')
        return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, swap(x, k)]));
      if (typeof v !== 'string') return v;
      if (key === 'start' && v.includes('T')) return nextStart();
      if (key === 'end' && v.includes('T')) return undefined;
      const k = kindOfId(v)?.kind;
      return k && ids[k] ? ids[k] : v;
    };
    return swap(op.example) as Record<string, unknown>;
  }

  /** The body with `value` at `field` (`[]`: an array's first element), and what it needs around it. */
  function bodyWith(op: WriteOperation, field: string[], value: string): Record<string, unknown> {
    // The send takes exactly one of text, template or media.
    if (op.name === 'sendMessage') {
      const to = '050-123-4567';
      if (field[0] === 'params') return { to, template: 'appointment_reminder', params: [value] };
      if (field[0] === 'media')
        return { to, media: { type: 'document', url: 'https://files.example.com/a.pdf', [field[1]]: value } };
      return { to, [field[0]]: value };
    }
    const body = structuredClone(exampleOf(op));
    // A payment's method details go with their type.
    if (op.name === 'recordPayment' && field[0] === 'method')
      body.method = { type: field[1] === 'bank' ? 'bank_transfer' : field[1] };
    // A patient's contact needs its type (the update's example has none).
    if (field[0] === 'contacts' && !Array.isArray(body.contacts))
      body.contacts = [{ type: 'phone', value: '050-765-4321', label: 'Home' }];
    let at: any = body;
    field.forEach((seg, i) => {
      const last = i === field.length - 1;
      const next = field[i + 1];
      if (seg === '[]') return;
      if (next === '[]') {
        const first = Array.isArray(at[seg]) && at[seg].length ? at[seg][0] : {};
        if (i + 1 === field.length - 1) at[seg] = [value];
        else {
          at[seg] = [typeof first === 'object' ? { ...first } : {}];
          at = at[seg][0];
        }
        return;
      }
      if (last) at[seg] = value;
      else at = at[seg] = at[seg] && typeof at[seg] === 'object' ? at[seg] : {};
    });
    return body;
  }

  it('is a 422 naming the field, over REST, for every write; nothing stored, nothing logged', async () => {
    const cases: { op: WriteOperation; field: string[]; max: number }[] = [];
    for (const op of allWrites())
      for (const [field, max] of freeTextFields(op.input)) cases.push({ op, field, max });
    expect(cases.length).toBeGreaterThan(100);
    const problems: string[] = [];
    const tooShort = new Set<string>();
    let sent = 0;
    let n = 0;
    const lines = await logLinesOf(async () => {
      const jobs: (() => Promise<void>)[] = [];
      for (const { op, field, max } of cases)
        for (const form of cardForms) {
          const param = field.join('.').replace(/\.\[\]/g, '[0]');
          const label = `${op.name} ${param} — ${form.name}`;
          const leaf = field[field.length - 1];
          const around = leaf === 'url' ? `https://hooks.example.com/pay/${form.text}` : `card ${form.text}`;
          // A field too short for the whole sentence takes the number alone; one too short even
          // for that (a country code, a tooth) refuses it for its length, which is as good.
          const value = around.length <= max ? around : form.text;
          const tooLong = value.length > max;
          if (tooLong) tooShort.add(`${op.name}.${param}`);
          const route = restRoutes.find((r) => r.field === restFieldOf(op))!;
          const path = `/v1${route.path.replace(':id', firstIds[kindOf(op)][op.ids?.id ?? 'Patient'] ?? 'x_1')}`;
          const headers: Record<string, string> =
            op.method === 'POST' ? { 'idempotency-key': `cards-${++n}` } : {};
          jobs.push(async () => {
            const r = await app.send(op.method, path, bodyWith(op, field, value), writerOf(op), headers);
            sent++;
            const refused =
              r.status === 422 &&
              r.body.error?.param === param &&
              (tooLong ? /at most|<=\d/ : /card number.*never stored/).test(r.body.error?.message);
            if (!refused) problems.push(`${label}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
            if (showsCard(JSON.stringify(r.body), form.pan)) problems.push(`${label}: the answer repeats it`);
          });
        }
      // A few at a time: the machine's two cores are shared.
      for (let i = 0; i < jobs.length; i += 6) await Promise.all(jobs.slice(i, i + 6).map((j) => j()));
    });
    // One line per field: which forms got through, and the first answer.
    const byField = new Map<string, string[]>();
    for (const p of problems) {
      const [field] = p.split(' — ');
      byField.set(field, [...(byField.get(field) ?? []), p]);
    }
    // (Soft: a failure shows the answers, the rows and the log lines at once.)
    expect
      .soft([...byField].map(([f, ps]) => `${f}: ${ps.length} of ${cardForms.length}, e.g. ${ps[0]}`))
      .toEqual([]);
    expect(sent).toBe(cases.length * cardForms.length);
    // Most fields took every form as a sentence or alone.
    expect(tooShort.size).toBeLessThan(cases.length / 4);
    expect.soft(await tablesShowingCards()).toEqual([]);
    expect.soft(logShowingCards(lines)).toEqual([]);
  }, 300_000);

  it('in a URL path, in a GraphQL note, or echoed by a GraphQL error, it reaches no answer, row or log line', async () => {
    const problems: string[] = [];
    const createCall = 'mutation($input: CreateCallInput!) { createCall(input: $input) { call { id } } }';
    const lines = await logLinesOf(async () => {
      for (const form of cardForms) {
        const shows = (what: string, body: unknown) => {
          if (showsCard(JSON.stringify(body), form.pan))
            problems.push(`${form.name}: ${what} answer shows it`);
        };
        // As typed (fetch percent-encodes what a URL cannot hold) and percent-encoded whole.
        for (const path of [`/v1/patients/${form.text}`, `/v1/patients/${encodeURIComponent(form.text)}`]) {
          const r = await app.get(path, writers.reader);
          if (r.status !== 404 && r.status !== 422) problems.push(`${form.name}: GET ${path} ${r.status}`);
          shows(`GET ${JSON.stringify(path)}`, r.body);
        }
        // graphql-js quotes a value it cannot coerce in its message.
        const echoed = await app.gql(
          createCall,
          { input: { ...inputOf(callBody()), direction: form.text } },
          writers.dental,
        );
        if (!echoed.body.errors?.length) problems.push(`${form.name}: an enum value taken`);
        shows('GraphQL coercion', echoed.body);
        const noted = await app.gql(
          createCall,
          { input: inputOf(callBody({ note: `card ${form.text}` })) },
          writers.dental,
        );
        if (noted.body.errors?.[0]?.extensions?.param !== 'input.note')
          problems.push(`${form.name}: GraphQL note ${JSON.stringify(noted.body).slice(0, 300)}`);
        shows('GraphQL note', noted.body);
      }
    });
    expect.soft(problems).toEqual([]);
    // Every request was logged, and no line shows a card's digits.
    const requests = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
    expect(requests.length).toBe(cardForms.length * 4);
    expect(requests.filter((l) => l.route.startsWith('/v1/patients/')).length).toBe(cardForms.length * 2);
    expect.soft(logShowingCards(lines)).toEqual([]);
    expect.soft(await tablesShowingCards()).toEqual([]);
  }, 120_000);
});

/** Every free-text string field of a body definition (carrying the card check): its path and its maximum length. */
function freeTextFields(schema: z.ZodType): [string[], number][] {
  const out: [string[], number][] = [];
  const walk = (s: any, path: string[]) => {
    if (s instanceof z.ZodObject) for (const [k, v] of Object.entries(s.shape)) walk(v, [...path, k]);
    else if (s instanceof z.ZodArray) walk(s.element, [...path, '[]']);
    else if (s instanceof z.ZodOptional || s instanceof z.ZodNullable || s instanceof z.ZodDefault)
      walk(s.unwrap(), path);
    else if (s instanceof z.ZodPipe) walk(s.def.out, path);
    else if (s instanceof z.ZodString) {
      const checks = (s.def.checks ?? []).map((c: any) => c._zod.def);
      if (checks.some((c: any) => c.check === 'custom' && c.fn === noCardNumber))
        out.push([path, s.maxLength ?? Number.POSITIVE_INFINITY]);
    }
  };
  walk(schema, []);
  return out;
}

const PANS = [...new Set(cardForms.map((f) => f.pan))];

/** Tables (of the app's schema and the queue's) with a row showing a card's digits, with the row. */
async function tablesShowingCards(): Promise<string[]> {
  const tables = await sql<{ schema: string; name: string }>(
    `select table_schema as "schema", table_name as "name" from information_schema.tables
      where table_schema in ('public', 'pgboss') and table_type = 'BASE TABLE'`,
  );
  expect(tables.length).toBeGreaterThan(20);
  const found: string[] = [];
  for (const t of tables) {
    const rows = await sql<{ row: string }>(`select t::text as "row" from "${t.schema}"."${t.name}" t`);
    for (const { row } of rows)
      for (const pan of PANS)
        if (showsCard(row, pan)) found.push(`${t.schema}.${t.name}: ${row.slice(0, 300)}`);
  }
  return found;
}

/** Log lines with a string value showing a card's digits. */
function logShowingCards(lines: string[]): string[] {
  const found: string[] = [];
  const strings = (v: unknown): string[] =>
    typeof v === 'string' ? [v] : v && typeof v === 'object' ? Object.values(v).flatMap(strings) : [];
  for (const line of lines)
    for (const s of strings(JSON.parse(line)))
      for (const pan of PANS) if (showsCard(s, pan)) found.push(line);
  return found;
}
