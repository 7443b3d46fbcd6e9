import { beforeAll, describe, expect, it } from 'vitest';
import { allScopes } from '../src/auth/scopes.ts';
import { fixtures } from './fixtures.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * Every date and date-time input of the OpenAPI document (query parameters and body fields,
 * nested ones included) is a real calendar date from 1900-01-01 to 2200-12-31, or a 422 naming
 * it (docs/decisions.md: dates). The table is the document itself: a new date input is in it,
 * and in this test, the moment it is declared. Year 0 and 9999-12-31T23:59:59Z (whose end ran
 * into year 10000) were 500s from PostgreSQL; 2026-02-30 was booked as 2 March.
 */
let app: TestApp;
let dental: string;
let vet: string;
let doc: any;

beforeAll(async () => {
  app = await startTestApp();
  // chat:write never shares a key with chat:read; no date input needs it.
  const scopes = allScopes.filter((s) => s !== 'chat:write');
  dental = (await app.clinicWithKey('dental', scopes)).key;
  vet = (await app.clinicWithKey('veterinary', scopes)).key;
  doc = (await app.get('/v1/openapi.json')).body;
});

type DateForm = 'date' | 'date-time';
interface DateInput {
  method: string;
  path: string;
  where: 'query' | 'body';
  /** The parameter's name, or the body field's path (`method.check.date`). */
  param: string;
  form: DateForm;
}

/** Every date input of the document, walked from its parameters and request bodies. */
function dateInputs(document: any): DateInput[] {
  const found: DateInput[] = [];
  for (const [path, ops] of Object.entries<any>(document.paths))
    for (const [method, op] of Object.entries<any>(ops)) {
      for (const p of op.parameters ?? [])
        if (p.in === 'query' && isDate(p.schema))
          found.push({ method, path, where: 'query', param: p.name, form: formOf(p.schema) });
      const body = op.requestBody?.content?.['application/json']?.schema;
      if (body)
        walk(body, [], (field, form) => found.push({ method, path, where: 'body', param: field, form }));
    }
  return found;
}

/** A date or date-time, or a choice of them (the time filters take either: `anyOf`). */
const isDate = (s: any): boolean =>
  s?.format === 'date' || s?.format === 'date-time' || (s?.anyOf ?? []).some((a: any) => isDate(a));
const formOf = (s: any): DateForm =>
  s.format ?? ((s.anyOf ?? []).some((a: any) => a.format === 'date-time') ? 'date-time' : 'date');

function walk(schema: any, at: string[], seen: (field: string, form: DateForm) => void) {
  if (!schema || typeof schema !== 'object') return;
  if (isDate(schema)) return seen(at.join('.'), formOf(schema));
  for (const alt of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) walk(alt, at, seen);
  for (const [name, sub] of Object.entries<any>(schema.properties ?? {})) walk(sub, [...at, name], seen);
}

const samples = (form: DateForm) =>
  form === 'date'
    ? {
        year0: '0000-01-01',
        y9999: '9999-12-31',
        feb30: '2026-02-30',
        month13: '2026-13-01',
        valid: '2020-06-15',
      }
    : {
        year0: '0000-01-01T00:00:00Z',
        y9999: '9999-12-31T23:59:59Z',
        feb30: '2026-02-30T10:00:00Z',
        month13: '2026-13-01T10:00:00Z',
        valid: '2026-11-01T09:00:00Z',
      };

const setAt = (body: any, path: string[], value: unknown): any => {
  const [head, ...rest] = path;
  return { ...body, [head]: rest.length ? setAt(body?.[head] ?? {}, rest, value) : value };
};

/** A well-formed id for each path parameter (an unknown record: the input is checked first). */
function concrete(path: string, op: any): string {
  return path.replace(/\{([^}]+)\}/g, (_, name) => {
    const pattern: string = op.parameters?.find((p: any) => p.name === name)?.schema?.pattern ?? '';
    const prefix = /\^([a-z]+)_/.exec(pattern)?.[1] ?? 'x';
    return `${prefix}_999`;
  });
}

async function send(input: DateInput, value: string) {
  const op = doc.paths[input.path][input.method];
  const key = /animals|clients/.test(input.path) ? vet : dental;
  const url = new URL(concrete(input.path, op), 'http://x');
  // The other required parameters from the document's examples (availability's range).
  for (const p of op.parameters ?? [])
    if (p.in === 'query' && p.required && p.name !== input.param)
      url.searchParams.set(
        p.name,
        String(p.example ?? `${/\^([a-z]+)_/.exec(p.schema?.pattern ?? '')?.[1]}_1`),
      );
  if (input.where === 'query') {
    url.searchParams.set(input.param, value);
    return input.method === 'get'
      ? app.get(`${url.pathname}${url.search}`, key)
      : app.send(input.method.toUpperCase(), `${url.pathname}${url.search}`, {}, key);
  }
  const example = op.requestBody.content['application/json'].example ?? {};
  const body = setAt(example, input.param.split('.'), value);
  return app.send(input.method.toUpperCase(), `${url.pathname}${url.search}`, body, key);
}

describe('every date input of the OpenAPI document', () => {
  it('finds the inputs the issue names (the walk is not empty)', () => {
    const names = dateInputs(doc).map((i) => `${i.method} ${i.path} ${i.param}`);
    expect(names).toEqual(
      expect.arrayContaining([
        'post /v1/appointments start',
        'post /v1/appointments end',
        'post /v1/patients/{id}/payments paid_at',
        'post /v1/patients/{id}/payments method.check.date',
        'post /v1/webhooks/{id}/recover since',
        'post /v1/patients birth_date',
        'get /v1/availability from',
        'get /v1/availability to',
        'get /v1/appointments from',
        'get /v1/events created_since',
      ]),
    );
  });

  it('an input named like a time is declared as a date (so the table cannot miss it)', () => {
    const timeLike = /(_at|_date|_since|^since|^start|^end)$/;
    const undeclared: string[] = [];
    for (const [path, ops] of Object.entries<any>(doc.paths))
      for (const [method, op] of Object.entries<any>(ops)) {
        for (const p of op.parameters ?? [])
          if (p.in === 'query' && (timeLike.test(p.name) || /^(from|to)$/.test(p.name)) && !isDate(p.schema))
            undeclared.push(`${method} ${path} ?${p.name}`);
        const props = (s: any, at: string[]): void => {
          for (const [n, sub] of Object.entries<any>(s?.properties ?? {})) {
            const field = [...at, n].join('.');
            const leaf = [sub, ...(sub.anyOf ?? [])].some(isDate);
            if (timeLike.test(n) && sub.type !== 'object' && !leaf && !/working_hours/.test(path))
              undeclared.push(`${method} ${path} ${field}`);
            props(sub, [...at, n]);
          }
        };
        props(op.requestBody?.content?.['application/json']?.schema, []);
      }
    expect(undeclared).toEqual([]);
  });

  it('refuses year 0, 9999-12-31T23:59:59Z, 2026-02-30 and 2026-13-01 with a 422 naming the field; a valid date passes the check', async () => {
    const wrong: string[] = [];
    for (const input of dateInputs(doc)) {
      // The valid value: the input's own example where it has one (availability's range).
      const example = doc.paths[input.path][input.method].parameters?.find(
        (p: any) => p.name === input.param,
      )?.example;
      const s = { ...samples(input.form), ...(input.where === 'query' && example ? { valid: example } : {}) };
      for (const [label, value] of Object.entries(s)) {
        const r = await send(input, value);
        const where = `${input.method.toUpperCase()} ${input.path} ${input.param}=${value} (${label})`;
        if (r.status >= 500) wrong.push(`${where}: ${r.status} ${JSON.stringify(r.body)}`);
        else if (label === 'valid') {
          if (r.body?.error?.param === input.param) wrong.push(`${where}: refused ${JSON.stringify(r.body)}`);
        } else if (r.status !== 422 || r.body.error.param !== input.param)
          wrong.push(`${where}: ${r.status} ${JSON.stringify(r.body)}`);
        else if (!/calendar|1900-01-01 to 2200-12-31/.test(r.body.error.message))
          wrong.push(`${where}: unclear message ${r.body.error.message}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});

describe('a birth date', () => {
  it('is not in the future: tomorrow is a 422 naming birth_date, today is taken', async () => {
    app.clock.set('2026-11-01T10:00:00Z');
    const born = (birth_date: string) => app.post('/v1/patients', { first_name: 'Dana', birth_date }, dental);
    const tomorrow = await born('2026-11-03');
    expect(tomorrow.status).toBe(422);
    expect(tomorrow.body.error).toMatchObject({ param: 'birth_date' });
    expect(tomorrow.body.error.message).toMatch(/future/);
    // Already 2 November at UTC+14: no clinic's today is refused.
    expect((await born('2026-11-02')).status).toBe(201);
    expect((await born('1900-01-01')).status).toBe(201);
  });
});

describe('dates through GraphQL and computed ones', () => {
  let ids: { patient: string; branch: string; provider: string; type: string };
  let booker: string;
  beforeAll(async () => {
    const c = await app.clinicWithKey('dental', ['appointments:write', 'appointments:read']);
    const fx = fixtures(app.orm, c.clinicId);
    const cat = await fx.catalog();
    const patient = await fx.patient({ first: 'Dana', last: 'Cohen' });
    ids = {
      patient: `pat_${patient.id}`,
      branch: `br_${cat.branch.id}`,
      provider: `prv_${cat.provider.id}`,
      type: `apt_${cat.type.id}`,
    };
    booker = c.key;
  });

  it('GraphQL arguments and input fields get the same 422 naming the field', async () => {
    const book = await app.gql(
      'mutation($i: CreateAppointmentInput!) { createAppointment(input: $i) { appointment { id } } }',
      {
        i: {
          patientId: ids.patient,
          branchId: ids.branch,
          providerId: ids.provider,
          typeId: ids.type,
          start: '2026-02-30T09:00:00Z',
        },
      },
      booker,
    );
    expect(book.body.errors[0].extensions).toMatchObject({
      code: 'validation_failed',
      param: 'input.start',
    });
    expect(book.body.errors[0].message).toMatch(/not a date on the calendar/);
    const list = await app.gql(
      '{ appointments(first: 1, from: "0000-01-01") { edges { cursor } } }',
      {},
      booker,
    );
    expect(list.body.errors[0].extensions).toMatchObject({ code: 'validation_failed', param: 'from' });
    const update = await app.gql(
      'mutation { updateAppointment(input: {id: "appt_1", note: "x", expectedUpdatedAt: "2026-02-30T10:00:00.000Z"}) { appointment { id } } }',
      {},
      booker,
    );
    expect(update.body.errors[0].extensions).toMatchObject({
      code: 'validation_failed',
      param: 'input.expectedUpdatedAt',
    });
  });

  it('an appointment whose computed end passes 2200-12-31 is a 422 naming start, not a 500', async () => {
    const r = await app.post(
      '/v1/appointments',
      {
        patient_id: ids.patient,
        branch_id: ids.branch,
        provider_id: ids.provider,
        type_id: ids.type,
        start: '2200-12-31T23:59:00Z',
      },
      booker,
    );
    expect(r.status).toBe(422);
    expect(r.body.error.param).toBe('start');
  });
});
