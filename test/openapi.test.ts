import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { readScopes, writeScopes } from '../src/auth/scopes.ts';
import { seedDemo } from '../src/demo/seed-demo.ts';
import { entityNamed } from '../src/entities/index.ts';
import { kindOfId, prefixes, toId } from '../src/lib/ids.ts';
import { toneWav } from '../src/media/wav.ts';
import { requestBodies } from '../src/rest/request-bodies.ts';
import { restRoutes } from '../src/rest/routes.ts';
import { allWrites } from '../src/services/all-writes.ts';
import { Patient } from '../src/services/patients/patient.resource.ts';
import { allShapes, includesOf } from '../src/services/resource.ts';
import { restFieldOf, type WriteOperation } from '../src/services/writes.ts';
import { deliveryFixtures } from './full-fixtures.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { serve, type TestServer } from './media-files.ts';

/**
 * The /v1 OpenAPI document against the code: it is the committed openapi.json, it covers exactly
 * the route table, and real responses of every route (successes in every shape, and errors)
 * validate against the response schemas it documents for that status.
 */

const committed = JSON.parse(readFileSync(new URL('../openapi.json', import.meta.url), 'utf8'));
const docId = 'https://clinic-gateway.invalid/openapi.json';

let app: TestApp;
let doc: any;
let keys: {
  dental: string;
  vet: string;
  chatWrite: string;
  patientsOnly: string;
  writer: string;
  vetWriter: string;
};
let clinics: { dental: number; vet: number };
/** Where the example call recording is downloaded from (a real HTTP server on loopback). */
let recordings: TestServer;

/** Every (operationId, status) a real response was validated for, and which had non-empty data. */
const seen = new Map<string, Set<number>>();
const nonEmpty = new Set<string>();

// ---------- schema validation ----------

/**
 * The component schemas as one JSON Schema 2020-12 document (OpenAPI 3.1 schemas are JSON
 * Schema). In the test every documented object is closed (additionalProperties: false), so a
 * field the API returns but the document does not describe fails too.
 */
function closedSchemas(node: any): any {
  if (Array.isArray(node)) return node.map(closedSchemas);
  if (!node || typeof node !== 'object') return node;
  const out: any = {};
  for (const [k, v] of Object.entries(node)) {
    out[k] =
      k === '$ref' && typeof v === 'string'
        ? v.replace('#/components/schemas/', '#/$defs/')
        : closedSchemas(v);
  }
  if (out.properties && out.additionalProperties === undefined) out.additionalProperties = false;
  return out;
}

function makeAjv(document: any) {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  ((ajvFormats as any).default ?? ajvFormats)(ajv);
  ajv.addSchema({ $id: docId, $defs: closedSchemas(document.components.schemas) });
  return ajv;
}

let ajv: Ajv2020;
/** The subscription of beforeAll (never deleted) and an attempt of its log: retry and recover act on them. */
const hookIds = { subscription: '', delivery: '' };
const validators = new Map<string, ValidateFunction>();

function validatorFor(ref: string): ValidateFunction {
  let v = validators.get(ref);
  if (!v) {
    v = ajv.compile({ $ref: `${docId}${ref.replace('#/components/schemas/', '#/$defs/')}` });
    validators.set(ref, v);
  }
  return v;
}

const oasPath = (p: string) => `/v1${p.replace(/:([a-z_]+)/gi, '{$1}')}`;

/** The documented operation whose path template matches a concrete /v1 path. */
function operationFor(method: string, urlPath: string): { template: string; op: any } {
  for (const [template, item] of Object.entries<any>(doc.paths)) {
    const re = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    if (re.test(urlPath) && item[method.toLowerCase()]) return { template, op: item[method.toLowerCase()] };
  }
  throw new Error(`No documented operation for ${method} ${urlPath}`);
}

/** Throws unless `body` is what the document says `op` answers with `status`. */
/** A response, or the response component it refers to. */
function resolved(response: any): any {
  const ref: unknown = response?.$ref;
  if (typeof ref !== 'string') return response;
  return doc.components.responses[ref.replace('#/components/responses/', '')];
}

function assertDocumented(op: any, status: number, body: unknown, label: string): void {
  const response = resolved(op.responses?.[String(status)]);
  if (!response) {
    throw new Error(
      `${label}: status ${status} is not documented for ${op.operationId} (has ${Object.keys(op.responses)})`,
    );
  }
  const ref = response.content?.['application/json']?.schema?.$ref;
  if (!ref) throw new Error(`${label}: response ${status} of ${op.operationId} has no JSON schema`);
  const validate = validatorFor(ref);
  if (!validate(body)) {
    throw new Error(
      `${label}: ${status} body does not match ${ref}: ${ajv.errorsText(validate.errors, { separator: '\n  ' })}\n` +
        `body: ${JSON.stringify(body).slice(0, 800)}`,
    );
  }
}

interface Init {
  method?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

/** A real request (GET, or a POST with `init.body`), checked against the document; returns the body. */
async function call(path: string, key: string | null, expectStatus: number, init: Init = {}): Promise<any> {
  const method = init.method ?? 'GET';
  const r =
    method === 'GET'
      ? await app.get(path, key)
      : await app.send(method, path, method === 'DELETE' ? undefined : (init.body ?? {}), key, init.headers);
  const label = `${method} ${path}`;
  expect(r.status, `${label}: ${JSON.stringify(r.body).slice(0, 400)}`).toBe(expectStatus);
  expect(r.headers.get('content-type') ?? '', label).toContain('application/json');
  const urlPath = path.split('?')[0];
  const { op } = operationFor(method, urlPath);
  assertDocumented(op, r.status, r.body, label);
  if (r.status >= 400) expect(r.body.error.request_id, label).toBe(r.headers.get('x-request-id'));
  if (!seen.has(op.operationId)) seen.set(op.operationId, new Set());
  seen.get(op.operationId)!.add(r.status);
  const data = r.status < 300 ? r.body.data : undefined;
  if (Array.isArray(data) ? data.length > 0 : data && typeof data === 'object') nonEmpty.add(op.operationId);
  return r.body;
}

// ---------- setup ----------

beforeAll(async () => {
  app = await startTestApp();
  recordings = await serve((_req, res) => res.end(toneWav(0.1)));
  const demo = await seedDemo(app.orm.em.fork(), { now: app.clock.now() });
  const dentalClinic = Number(demo.keys.readAll.clinic_id.split('_')[1]);
  const vetClinic = Number(demo.keys.vetReadAll.clinic_id.split('_')[1]);
  clinics = { dental: dentalClinic, vet: vetClinic };
  keys = {
    // Every read, the event log's and the subscriptions' included (the demo's reading key holds
    // no webhooks:manage: that goes with its writer's).
    dental: await app.key(dentalClinic, [...readScopes, 'webhooks:manage']),
    vet: demo.keys.vetReadAll.key,
    chatWrite: demo.keys.chatWrite.key,
    patientsOnly: await app.key(dentalClinic, ['patients:read']),
    writer: await app.key(dentalClinic, [
      ...writeScopes,
      'vaccines:read',
      'measurements:read',
      'webhooks:manage',
    ]),
    vetWriter: await app.key(vetClinic, [
      ...writeScopes,
      'vaccines:read',
      'measurements:read',
      'webhooks:manage',
    ]),
  };
  // A webhook subscription of the dental clinic, for the routes that name one (the seed has none).
  const hook = await app.post('/v1/webhooks', { url: 'https://hooks.example.com/openapi' }, keys.writer);
  expect(hook.status).toBe(201);
  // Its delivery log (the worker does not write one yet): two attempts.
  await deliveryFixtures(app.orm, dentalClinic, Number(hook.body.data.id.split('_')[1]));
  hookIds.subscription = hook.body.data.id;
  hookIds.delivery = (
    await app.get(`/v1/webhooks/${hook.body.data.id}/deliveries?limit=1`, keys.writer)
  ).body.data[0].id;
  const r = await app.get('/v1/openapi.json');
  expect(r.status).toBe(200);
  doc = r.body;
  ajv = makeAjv(doc);
});

// ---------- the document itself ----------

describe('GET /v1/openapi.json', () => {
  it('is the committed openapi.json (regenerate with `npm run contracts`)', () => {
    expect(doc).toEqual(committed);
  });

  it('is OpenAPI 3.1 with info, a global bearer scheme and the Error schema', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info.title).toBeTruthy();
    expect(doc.info.version).toBeTruthy();
    expect(doc.info.description).toContain('Bearer');
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.components.schemas.Error.required).toEqual(['error']);
    expect(doc.components.schemas.Error.properties.error.required).toEqual([
      'code',
      'message',
      'request_id',
      'doc_url',
    ]);
    for (const unused of ['Query', 'Mutation', 'Subscription'])
      expect(doc.components.schemas[unused]).toBeUndefined();
  });

  it('has exactly the operations of the route table, with their method, operationId, tag and summary', () => {
    const documented = Object.entries<any>(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(documented.sort()).toEqual(restRoutes.map((r) => `${r.method} ${oasPath(r.path)}`).sort());
    // SOFA's own /webhook routes are blocked (ours are /v1/webhooks).
    expect(Object.keys(doc.paths).some((p) => /^\/v1\/webhook(\/|$)/.test(p))).toBe(false);
    for (const r of restRoutes) {
      const op = doc.paths[oasPath(r.path)][r.method.toLowerCase()];
      expect(op, `${r.method} ${r.path}`).toMatchObject({
        operationId: r.field,
        tags: [r.tag],
        summary: r.summary,
      });
      expect(op.responses[String(r.status)], r.field).toBeDefined();
      for (const status of ['401', '403', '500'])
        expect(op.responses[status], `${r.field} ${status}`).toBeDefined();
    }
  });

  it('declares each parameter once, in the right place, with the right schema', () => {
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const op of Object.values<any>(item)) {
        const params: any[] = op.parameters ?? [];
        const names = params.map((p) => `${p.in}:${p.name}`);
        expect(new Set(names).size, `${op.operationId} duplicates`).toBe(names.length);
        const inPath = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
        expect(
          params.filter((p) => p.in === 'path').map((p) => p.name),
          op.operationId,
        ).toEqual(inPath);
        for (const p of params) {
          expect(p.in === 'header' ? p.name : p.in, `${op.operationId} ${p.name}`).toMatch(
            /^(path|query|Idempotency-Key|If-Match)$/,
          );
          if (p.in === 'path') expect(p.required).toBe(true);
          ajv.compile(p.schema); // a valid JSON schema
        }
        if (inPath.length) expect(op.responses['404'], op.operationId).toBeDefined();
        // A malformed If-Match is a 422 too (a DELETE has no body but may have it).
        if (params.some((p) => p.in === 'query' || p.name === 'If-Match') || op.requestBody)
          expect(op.responses['422'], op.operationId).toBeDefined();
        else expect(op.responses['422'], op.operationId).toBeUndefined();
        const byName = Object.fromEntries(params.map((p) => [p.name, p]));
        if (byName.limit) {
          expect(byName.limit).toMatchObject({ in: 'query', required: false });
          expect(byName.limit.schema).toEqual({ type: 'integer', minimum: 1, maximum: 100, default: 25 });
          expect(byName.cursor).toMatchObject({
            in: 'query',
            required: false,
            schema: { type: 'string', pattern: '^[A-Za-z0-9_-]+$' },
          });
        }
        if (byName.response_format) {
          expect(byName.response_format.schema).toEqual({
            type: 'string',
            enum: ['concise', 'detailed'],
            default: 'concise',
          });
        }
        if (byName.include) {
          expect(byName.include).toMatchObject({
            in: 'query',
            style: 'form',
            explode: false,
            schema: { type: 'array', items: { type: 'string', enum: includesOf(Patient) } },
          });
          expect(byName.include.description).toMatch(/owner.*species/);
        }
      }
    }
    const listPatients = doc.paths['/v1/patients'].get.parameters.map((p: any) => p.name);
    expect(listPatients).toEqual([
      'phone',
      'email',
      'query',
      'limit',
      'cursor',
      'response_format',
      'include',
    ]);
  });

  it('follows GraphQL nullability; every key is required except the ones REST may leave out', () => {
    const s = doc.components.schemas;
    // Keys pruned unless asked for (groups a request may leave out, docs/decisions.md): the only optional ones.
    const conditional: Record<string, string[]> = Object.fromEntries(
      allShapes().map((shape) => [
        shape.name,
        Object.keys(shape.fields).filter((f) => shape.fields[f].group !== 'core'),
      ]),
    );
    expect(conditional.Patient).toEqual([...detailedFields, 'owner', 'species', 'breed']);
    expect(conditional.PatientSummary).toEqual(['owner', 'species', 'breed']);
    // The webhooks' envelopes: `test` is on samples only (test/openapi-webhooks.test.ts checks them).
    const envelopes = new Set(
      Object.values<any>(doc.webhooks).map((w) =>
        w.post.requestBody.content['application/json'].schema.$ref.replace('#/components/schemas/', ''),
      ),
    );
    for (const [name, schema] of Object.entries<any>(s)) {
      if (name === 'Error' || envelopes.has(name)) continue;
      const keys = Object.keys(schema.properties ?? {});
      const optional = conditional[name] ?? [];
      expect(schema.required ?? [], name).toEqual(keys.filter((k) => !optional.includes(k)));
      for (const f of optional) expect(schema.properties[f], `${name}.${f}`).toBeDefined();
    }

    expectSpecFields(s.Patient.required, [
      'id',
      'first_name',
      'last_name',
      'phone',
      'email',
      'gender',
      'birth_date',
      'status',
      'created_at',
      'updated_at',
    ]);
    expectSpecFields(s.PatientSummary.required, ['id', 'first_name', 'last_name', 'phone']);
    for (const page of ['PatientPage', 'AppointmentPage', 'TreatmentPage', 'PaymentPage'])
      expect(s[page].required, page).toEqual(['data', 'next_cursor']);
    expect(s.PatientBody.required).toEqual(['data']);
    expectSpecFields(s.Appointment.required, [
      'id',
      'patient',
      'branch',
      'provider',
      'type',
      'status',
      'start',
      'end',
      'note',
      'cancelled_at',
      'created_at',
      'updated_at',
    ]);
    expectSpecFields(s.Treatment.required, [
      'id',
      'patient',
      'appointment_id',
      'treatment',
      'provider',
      'description',
      'teeth',
      'price',
      'status',
      'performed_at',
      'note',
      'cancelled_at',
      'created_at',
      'updated_at',
    ]);
    expectSpecFields(s.Payment.required, [
      'id',
      'patient',
      'billing_account',
      'amount',
      'currency',
      'method',
      'is_refund',
      'refund_of_id',
      'receipt_number',
      'paid_at',
      'note',
      'cancelled_at',
      'created_at',
      'updated_at',
    ]);
    expectSpecFields(s.Vaccine.required, [
      'id',
      'name',
      'code',
      'species_id',
      'interval_months',
      'next_vaccine_id',
      'price',
      'batch_required',
    ]);

    // Required and nullable: [T, "null"], or anyOf [$ref, null] for objects.
    expect(s.Patient.properties.first_name.type).toEqual(['string', 'null']);
    expect(s.Patient.properties.status.anyOf).toEqual([
      { $ref: '#/components/schemas/StatusRef' },
      { type: 'null' },
    ]);
    expect(s.PatientPage.properties.next_cursor.type).toEqual(['string', 'null']);
    // A required object is its $ref (with the field's description beside it, as 3.1 allows).
    expect(s.Appointment.properties.branch).toEqual({
      $ref: '#/components/schemas/NamedRef',
      description: expect.any(String),
    });
    expect(s.Appointment.properties.provider.anyOf).toEqual([
      { $ref: '#/components/schemas/NamedRef' },
      { type: 'null' },
    ]);
    expect(s.Treatment.properties.teeth.type).toEqual(['array', 'null']);
    expect(s.Payment.properties.refund_of_id.type).toEqual(['string', 'null']);
    expect(s.Vaccine.properties.interval_months.type).toEqual(['integer', 'null']);
    expect(s.Patient.properties.owner.anyOf).toEqual([
      { $ref: '#/components/schemas/Owner' },
      { type: 'null' },
    ]);
    for (const f of conditional.Patient) expect(s.Patient.properties[f].description, f).toMatch(/absent/);
  });

  it('describes the 405 for another method on a documented path', () => {
    expect(doc.info.description).toMatch(/405/);
    expect(doc.info.description).toContain('#/components/responses/MethodNotAllowed');
    const res = doc.components.responses.MethodNotAllowed;
    expect(res.headers.Allow).toEqual({ $ref: '#/components/headers/Allow' });
    expect(doc.components.headers.Allow.schema).toEqual({ type: 'string' });
    expect(res.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    const validate = validatorFor('#/components/schemas/Error');
    expect(validate(res.content['application/json'].example), ajv.errorsText(validate.errors)).toBe(true);
    for (const item of Object.values<any>(doc.paths))
      for (const op of Object.values<any>(item))
        expect(op.responses['405'], op.operationId).toEqual({
          $ref: '#/components/responses/MethodNotAllowed',
        });
  });

  it('has an error example for every error response, each matching the Error schema', () => {
    let checked = 0;
    for (const item of Object.values<any>(doc.paths)) {
      for (const op of Object.values<any>(item)) {
        for (const [status, res] of Object.entries<any>(op.responses)) {
          if (Number(status) < 400) continue;
          // The shared responses (401, 405, 429, 5xx) are references: their example counts too.
          const example = resolved(res)?.content?.['application/json']?.example;
          expect(example, `${op.operationId} ${status} has no example`).toBeDefined();
          assertDocumented(op, Number(status), example, `${op.operationId} ${status} example`);
          checked++;
        }
      }
    }
    // A document whose error responses all went missing would otherwise pass with nothing checked.
    expect(checked).toBeGreaterThanOrEqual(Object.keys(doc.paths).length);
  });
});

/**
 * The fields the spec and docs/decisions.md name are all there, in their order; fields added
 * since (additive changes, docs/decisions.md Versioning) may stand among them.
 */
function expectSpecFields(actual: string[], spec: string[]) {
  expect(actual.filter((f) => spec.includes(f))).toEqual(spec);
}

// ---------- real responses ----------

const detailedFields = ['address', 'contacts', 'balance', 'id_number'];

describe('real responses match the document', () => {
  for (const kind of ['dental', 'vet'] as const) {
    it(`patients (${kind})`, async () => {
      const key = keys[kind];
      const concise = await call('/v1/patients', key, 200);
      expect(concise.data.length).toBeGreaterThan(0);
      for (const p of concise.data) {
        for (const f of [...detailedFields, 'owner', 'species']) expect(p, f).not.toHaveProperty(f);
      }
      const detailed = await call('/v1/patients?response_format=detailed&limit=100', key, 200);
      for (const p of detailed.data) for (const f of detailedFields) expect(p, f).toHaveProperty(f);
      const included = await call('/v1/patients?include=owner,species&response_format=concise', key, 200);
      for (const p of included.data) {
        expect(p).toHaveProperty('owner');
        expect(p).toHaveProperty('species');
      }
      if (kind === 'vet') expect(included.data.some((p: any) => p.owner && p.species)).toBe(true);
      await call('/v1/patients?include=owner&response_format=detailed', key, 200);

      const first = await call('/v1/patients?limit=1', key, 200);
      expect(typeof first.next_cursor).toBe('string');
      await call(`/v1/patients?limit=1&cursor=${first.next_cursor}`, key, 200);
      const last = await call('/v1/patients?limit=100', key, 200);
      expect(last.next_cursor).toBeNull();
      const someone = concise.data.find((p: any) => p.phone && p.last_name) ?? concise.data[0];
      if (someone.phone) await call(`/v1/patients?phone=${encodeURIComponent(someone.phone)}`, key, 200);
      if (someone.last_name)
        await call(`/v1/patients?query=${encodeURIComponent(someone.last_name)}`, key, 200);
      await call('/v1/patients?email=nobody%40example.com', key, 200);

      const id = concise.data[0].id;
      for (const q of [
        '',
        '?response_format=detailed',
        '?include=owner,species',
        '?include=species&response_format=detailed',
      ]) {
        const one = await call(`/v1/patients/${id}${q}`, key, 200);
        expect(one.data.id).toBe(id);
      }
    });

    it(`patient records (${kind})`, async () => {
      const key = keys[kind];
      const patients = (await call('/v1/patients?limit=100', key, 200)).data;
      for (const sub of ['appointments', 'treatments', 'payments']) {
        // The first patient with records, so the item schemas are exercised, not just [].
        let withRecords: string | undefined;
        for (const p of patients) {
          const page = await call(`/v1/patients/${p.id}/${sub}`, key, 200);
          if (page.data.length > 1) {
            withRecords = p.id;
            break;
          }
        }
        expect(withRecords, `a ${kind} patient with ${sub}`).toBeDefined();
        const base = `/v1/patients/${withRecords}/${sub}`;
        const inc = await call(`${base}?include=owner,species`, key, 200);
        for (const item of inc.data) {
          expect(item.patient).toHaveProperty('owner');
          expect(item.patient).toHaveProperty('species');
        }
        const first = await call(`${base}?limit=1&include=owner`, key, 200);
        expect(typeof first.next_cursor).toBe('string');
        await call(`${base}?limit=1&cursor=${first.next_cursor}`, key, 200);
        if (sub === 'treatments') {
          const withAppt = inc.data.find((t: any) => t.appointment_id);
          if (withAppt) await call(`${base}?appointment_id=${withAppt.appointment_id}`, key, 200);
        }
      }
    });

    it(`chat inbox (${kind})`, async () => {
      const key = keys[kind];
      const convs = await call('/v1/chat/conversations?limit=100', key, 200);
      expect(convs.data.length).toBeGreaterThan(0);
      const first = await call('/v1/chat/conversations?limit=2', key, 200);
      await call(`/v1/chat/conversations?limit=2&cursor=${first.next_cursor}`, key, 200);
      await call('/v1/chat/conversations?updated_since=2020-01-01&is_handled=false', key, 200);
      await call(`/v1/chat/conversations?phone=${convs.data[0].patient_phone}`, key, 200);
      for (const c of convs.data.slice(0, 3)) {
        await call(`/v1/chat/conversations/${c.id}`, key, 200);
        await call(`/v1/chat/conversations/${c.id}/messages?limit=100`, key, 200);
      }
      const msgs = await call('/v1/chat/messages?limit=100', key, 200);
      const types = new Set(msgs.data.map((m: any) => m.type));
      const statuses = new Set(msgs.data.map((m: any) => m.status));
      expect([...types].sort()).toEqual([
        'audio',
        'contacts',
        'document',
        'image',
        'sticker',
        'text',
        'video',
      ]);
      expect([...statuses].sort()).toEqual(['delivered', 'failed', 'read', 'received', 'sent']);
      for (const m of msgs.data.slice(0, 5)) await call(`/v1/chat/messages/${m.id}`, key, 200);
      const withMedia = msgs.data.find((m: any) => m.media.available);
      const link = await call(`/v1/chat/messages/${withMedia.id}/media`, key, 200);
      expect((await fetch(link.data.url)).status).toBe(200);
      const without = msgs.data.find((m: any) => !m.media.available);
      await call(`/v1/chat/messages/${without.id}/media`, key, 404);
      await call(
        '/v1/chat/messages?direction=inbound&type=text&from=2020-01-01&to=2100-01-01T00:00:00Z',
        key,
        200,
      );
      await call('/v1/chat/messages?updated_since=2020-01-01T00:00:00%2B02:00&limit=5', key, 200);
      await call('/v1/chat/templates', key, 200);
      await call('/v1/chat/templates?sendable=true', key, 200);
      const patients = (await call('/v1/patients?limit=100', key, 200)).data;
      for (const p of patients.slice(0, 12)) await call(`/v1/patients/${p.id}/chat/messages`, key, 200);
    });

    it(`catalog (${kind})`, async () => {
      const key = keys[kind];
      for (const r of restRoutes.filter(
        (x) => x.tag === 'Catalog' && x.method === 'GET' && !x.path.includes(':'),
      )) {
        const [first] = (await call(`/v1${r.path}`, key, 200)).data;
        // Each entry by id (its route follows its list's).
        if (first) await call(`/v1${r.path}/${first.id}`, key, 200);
      }
      const species = (await call('/v1/catalog/species', key, 200)).data;
      if (species.length) await call(`/v1/catalog/breeds?species_id=${species[0].id}`, key, 200);
    });
  }

  it('chat writes (dental, the chat:write key)', async () => {
    const ids = await realIds();
    const sent = await call('/v1/chat/messages', keys.chatWrite, 202, {
      method: 'POST',
      body: requestBodies().restSendMessage.example,
    });
    expect(sent.data.status).toBe('queued');
    await call('/v1/chat/messages', keys.chatWrite, 202, {
      method: 'POST',
      body: { to: '050-123-4567', template: 'appointment_reminder', params: ['Dana', 'Monday'] },
    });
    const reacted = await call(`/v1/chat/messages/${ids.Message}/reaction`, keys.chatWrite, 200, {
      method: 'POST',
      body: { emoji: '👍' },
    });
    expect(reacted.data.reactions.clinic).toBe('👍');
    await call(`/v1/chat/messages/${ids.Message}/reaction`, keys.chatWrite, 200, {
      method: 'POST',
      body: { emoji: null },
    });
    const handled = await call(`/v1/chat/conversations/${ids.Conversation}/handled`, keys.chatWrite, 200, {
      method: 'POST',
      body: { handled: true },
    });
    expect(handled.data.is_handled).toBe(true);
  });

  it('top-level records: every list the spec leaves open, its filters, pages and objects', async () => {
    const lists = restRoutes.filter(
      (r) =>
        r.method === 'GET' &&
        !r.path.includes(':id') &&
        !['Patients', 'Chat', 'Catalog', 'Events', 'Availability', 'Webhooks'].includes(r.tag),
    );
    for (const r of lists) {
      const key = (await app.get(`/v1${r.path}`, keys.dental)).status === 404 ? keys.vet : keys.dental;
      const base = `/v1${r.path}`;
      const page = await call(`${base}?limit=2&response_format=detailed`, key, 200);
      expect(page.data.length, r.field).toBeGreaterThan(0);
      if (page.next_cursor) await call(`${base}?limit=2&cursor=${page.next_cursor}`, key, 200);
      await call(`${base}?updated_since=2020-01-01T00:00:00Z&limit=3`, key, 200);
      const op = doc.paths[oasPath(r.path)].get;
      for (const p of op.parameters ?? []) {
        if (p.name === 'from') await call(`${base}?from=2020-01-01&to=2100-01-01`, key, 200);
        const ref = /^(.*)_id$/.exec(p.name) && page.data[0][p.name.replace(/_id$/, '')]?.id;
        if (ref) await call(`${base}?${p.name}=${ref}`, key, 200);
      }
      const one = restRoutes.find((x) => x.method === 'GET' && x.path === `${r.path}/:id`);
      if (one) {
        for (const q of ['', '?response_format=detailed'])
          await call(`${base}/${page.data[0].id}${q}`, key, 200);
      }
    }
  });

  it("calls: a recording's link, and the 404 of a call without one", async () => {
    const calls = (await call('/v1/calls?limit=100', keys.dental, 200)).data;
    const recorded = calls.find((c: any) => c.recording.available);
    const link = await call(`/v1/calls/${recorded.id}/recording`, keys.dental, 200);
    expect((await fetch(link.data.url)).status).toBe(200);
    const without = calls.find((c: any) => !c.recording.available);
    await call(`/v1/calls/${without.id}/recording`, keys.dental, 404);
  });

  it("availability: a provider's working hours and the free slots of the demo week", async () => {
    const ids = await idsAt('dental');
    const hours = await call(`/v1/catalog/providers/${ids.Provider}/working_hours`, keys.dental, 200);
    expect(hours.data.length).toBeGreaterThan(0);
    const week = `appointment_type_id=${ids.AppointmentType}&from=2026-11-01&to=2026-11-08`;
    const slots = await call(`/v1/availability?${week}`, keys.dental, 200);
    expect(slots.data.length).toBeGreaterThan(0);
    await call(
      `/v1/availability?${week}&provider_id=${ids.Provider}&branch_id=${ids.Branch}`,
      keys.dental,
      200,
    );
    await call(`/v1/availability?${week.replace('2026-11-08', '2026-12-08')}`, keys.dental, 422);
  });

  it('clinic writes: every write definition, with its example body, at the clinics it exists at', async () => {
    // Changes go to the objects this test created (a seeded one may be cancelled already).
    const created: Record<string, string> = {};
    for (const op of allWrites()) {
      const kind = clinicOf(op);
      const route = routeOf(op);
      const path = await pathAt(route, kind, created);
      const writer = writerOf(op);
      const body = (await exampleAt(op, kind)) as Record<string, unknown>;
      const headers = op.method === 'POST' ? { 'idempotency-key': `openapi-${op.name}` } : undefined;
      const stale = { method: op.method, body, headers: { 'if-match': '"1"' } };
      // A DELETE's stale If-Match is tried while the object still exists (a deleted one is a 404).
      if (op.method === 'DELETE' && documentedStatuses(route).includes(412))
        await call(path, writer, 412, stale);
      const r = await call(path, writer, op.status, { method: op.method, body, headers });
      if (!route.path.includes(':id')) created[op.resource.kind] = r.data.id;
      // Its event, recorded in the same transaction, carries exactly what the write answered.
      const [event] = await app.orm.em
        .fork()
        .getConnection()
        .execute<{ type: string; data: unknown }[]>(
          `select "type", "data" from "event" where "data"->>'id' = ? order by "id" desc limit 1`,
          [String(r.data?.id)],
        );
      // (A write whose event type depends on its input names it in `run`: the transcript's.)
      if (op.event) expect(event, `${op.name}: no event`).toBeDefined();
      if (typeof op.event === 'string') expect(event.type).toBe(op.event);
      if (event) expect(event.data, op.name).toEqual(r.data);
      // The same key with another body: 409, whatever that body holds.
      if (headers)
        await call(path, writer, 409, {
          method: op.method,
          body: { ...body, colour: 'red' },
          headers,
        });
      if (op.method !== 'DELETE' && documentedStatuses(route).includes(412))
        await call(path, writer, 412, stale);
    }
  });

  it('events: the list, its filters and pages, and one event (after the writes above recorded them)', async () => {
    const page = await call('/v1/events?limit=2', keys.dental, 200);
    expect(page.data.length).toBe(2);
    await call(`/v1/events?limit=2&cursor=${page.next_cursor}`, keys.dental, 200);
    const types = [...new Set(page.data.map((e: any) => e.type))].join(',');
    expect((await call(`/v1/events?type=${types}`, keys.dental, 200)).data.length).toBeGreaterThan(0);
    const since = await call('/v1/events?created_since=2020-01-01T00:00:00Z&limit=3', keys.dental, 200);
    if (since.next_cursor)
      await call(`/v1/events?created_since=2020-01-01&cursor=${since.next_cursor}`, keys.dental, 200);
    const idParam = doc.paths['/v1/events/{id}'].get.parameters.find((p: any) => p.name === 'id');
    const pattern = new RegExp(idParam.schema.pattern);
    for (const e of page.data) {
      expect(e.id).toMatch(pattern);
      await call(`/v1/events/${e.id}`, keys.dental, 200);
    }
  });

  it('webhooks: the list and its pages, and one subscription', async () => {
    for (const path of ['/a', '/b'])
      await call('/v1/webhooks', keys.writer, 201, {
        method: 'POST',
        body: { url: `https://hooks.example.com${path}` },
      });
    const page = await call('/v1/webhooks?limit=2', keys.dental, 200);
    expect(page.data.length).toBe(2);
    expect(page.next_cursor).toBeTruthy();
    await call(`/v1/webhooks?limit=2&cursor=${page.next_cursor}`, keys.dental, 200);
    for (const s of page.data) await call(`/v1/webhooks/${s.id}`, keys.dental, 200);
    // The first one (the oldest) has a delivery log of two attempts.
    const log = await call(`/v1/webhooks/${page.data[0].id}/deliveries?limit=1`, keys.dental, 200);
    expect(log.data.length).toBe(1);
    await call(`/v1/webhooks/${page.data[0].id}/deliveries?cursor=${log.next_cursor}`, keys.dental, 200);
  });

  it('every route answered with data at least once', () => {
    for (const r of restRoutes) {
      expect(seen.get(r.field)?.has(r.status), `${r.field} ${r.status}`).toBe(true);
      expect(nonEmpty.has(r.field), `${r.field}: non-empty data`).toBe(true);
    }
  });
});

/** Ids of each kind that exist at the dental clinic. */
async function realIds(): Promise<Record<string, string>> {
  const first = async (path: string) => (await app.get(path, keys.dental)).body.data[0].id;
  return {
    Patient: await first('/v1/patients?limit=1'),
    Conversation: await first('/v1/chat/conversations?limit=1'),
    // An inbound message, so a reaction on it is within the patient's window.
    Message: await first('/v1/chat/messages?limit=1&direction=inbound'),
  };
}

/** A concrete path for each route (ids that exist at the dental clinic), with a valid body for a POST. */
async function concretePaths(): Promise<{ route: (typeof restRoutes)[number]; path: string; init: Init }[]> {
  const out = [];
  for (const route of restRoutes) {
    const op = writeOf(route);
    const kind = clinicOf(op);
    out.push({
      route,
      path: await pathAt(route, kind),
      init:
        route.method === 'GET'
          ? {}
          : {
              method: route.method,
              body: op ? await exampleAt(op, kind) : requestBodies()[route.field].example,
            },
    });
  }
  return out;
}

type Route = (typeof restRoutes)[number];

const writeOf = (route: Route): WriteOperation | undefined =>
  allWrites().find((o) => restFieldOf(o) === route.field);
const routeOf = (op: WriteOperation): Route => restRoutes.find((r) => r.field === restFieldOf(op))!;
const clinicOf = (op: WriteOperation | undefined): 'dental' | 'vet' =>
  op?.clinicKinds && !op.clinicKinds.includes('dental') ? 'vet' : 'dental';
const writerAt = (kind: 'dental' | 'vet') => (kind === 'vet' ? keys.vetWriter : keys.writer);
/** The key a write takes: chat's need chat:write, which no key holds beside another write scope's reads. */
const writerOf = (op: WriteOperation) =>
  op.scopes.includes('chat:write') ? keys.chatWrite : writerAt(clinicOf(op));
const documentedStatuses = (route: Route): number[] =>
  Object.keys(doc.paths[oasPath(route.path)][route.method.toLowerCase()].responses).map(Number);

const firstIds = new Map<string, Record<string, string>>();

/** The first id of every kind at a clinic (straight from the tables). */
async function idsAt(kind: 'dental' | 'vet'): Promise<Record<string, string>> {
  const known = firstIds.get(kind);
  if (known) return known;
  const out: Record<string, string> = {};
  const conn = app.orm.em.fork().getConnection();
  for (const idKind of Object.keys(prefixes) as (keyof typeof prefixes)[]) {
    let meta: any;
    try {
      meta = app.orm.em.getMetadata(entityNamed(idKind));
    } catch {
      continue;
    }
    if (!meta?.properties?.clinic) continue;
    const [row] = await conn.execute<{ id: number | null }[]>(
      `select min("id") as "id" from "${meta.tableName}" where "clinic_id" = ?`,
      [clinics[kind]],
    );
    if (row?.id) out[idKind] = toId(idKind, row.id);
  }
  firstIds.set(kind, out);
  return out;
}

let slots = 0;

/** A write's example body with ids of the clinic's own records, and a time no booking holds. */
async function exampleAt(op: WriteOperation, kind: 'dental' | 'vet'): Promise<unknown> {
  const ids = await idsAt(kind);
  const swap = (v: unknown, key?: string): unknown => {
    if (Array.isArray(v)) return v.map((x) => swap(x));
    if (v && typeof v === 'object')
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, swap(x, k)]));
    if (typeof v !== 'string') return v;
    // A call's recording is downloaded: from the audio server of this test.
    if (key === 'url' && op.name === 'addCallRecording') return `${recordings.url}/call.wav`;
    // An appointment's times (working hours' start and end are wall-clock HH:MM, kept): a
    // Monday of its own at 09:00 in Jerusalem, inside the demo's first provider's hours.
    if (key === 'start' && v.includes('T'))
      return new Date(Date.UTC(2031, 0, 6, 7) + ++slots * 7 * 86_400_000).toISOString();
    if (key === 'end' && v.includes('T')) return undefined;
    const k = kindOfId(v)?.kind;
    return k && ids[k] ? ids[k] : v;
  };
  return swap(op.example);
}

async function pathAt(
  route: Route,
  kind: 'dental' | 'vet',
  created: Record<string, string> = {},
): Promise<string> {
  const ids = {
    ...(await idsAt(kind)),
    ...(kind === 'dental' ? await realIds() : {}),
    ...created,
  };
  // A subscription's own actions need one that DELETE /v1/webhooks/{id} has not deleted.
  if (route.method === 'POST' && route.path.startsWith('/webhooks/:id/'))
    return `/v1${route.path.replace(':id', hookIds.subscription).replace(':delivery_id', hookIds.delivery)}`;
  return `/v1${route.path.replace(':id', ids[route.ids?.id ?? 'Patient'])}`;
}

/** A key that may call the route (writes need their write scopes), and one that may not. */
const keyFor = (route: Route) => {
  const op = writeOf(route);
  if (op) return writerOf(op);
  return route.method === 'GET' ? keys.dental : keys.chatWrite;
};
const wrongKeyFor = (route: Route) => {
  const op = writeOf(route);
  // keys.dental holds webhooks:manage.
  if (op?.scopes.includes('chat:write')) return keys.dental;
  if (op)
    return clinicOf(op) === 'vet'
      ? keys.vet
      : op.scopes.includes('webhooks:manage')
        ? keys.patientsOnly
        : keys.dental;
  return route.method === 'GET' ? keys.chatWrite : keys.dental;
};

/** A value each validated parameter refuses with 422. */
const badValues: Record<string, string> = {
  direction: 'sideways',
  type: 'gif',
  from: 'yesterday',
  to: '2026-13-01',
  updated_since: 'last week',
  created_since: 'last week',
  is_handled: 'yes',
  sendable: 'maybe',
  limit: '0',
  cursor: 'not-a-cursor',
  include: 'owner,toys',
  response_format: 'verbose',
  phone: 'abc',
  appointment_id: 'pat_1',
  species_id: 'x',
};

/** Bodies each POST route refuses with 422, and the field it names. */
const badBodies: Record<string, [unknown, string][]> = {
  restSendMessage: [
    [{}, 'to'],
    [{ to: '050-123-4567' }, 'text'],
    [{ to: '050-123-4567', template: 'no_such_template' }, 'template'],
    [{ to: '050-123-4567', template: 'appointment_reminder', params: ['only one'] }, 'params'],
    [{ to: '050-123-4567', media: { type: 'image', url: 'http://example.com/a.png' } }, 'media.url'],
  ],
  restReactToMessage: [
    [{ emoji: 'not an emoji' }, 'emoji'],
    [{}, 'emoji'],
  ],
  restMarkConversationHandled: [[{ handled: 'true' }, 'handled']],
};

describe('error responses match the document', () => {
  it('POST bodies: 400 for invalid JSON, 413 past the limit, 409 for an Idempotency-Key reused with another body', async () => {
    // A DELETE takes no body (the document has none for it).
    const withBodies = (await concretePaths()).filter((c) => !['GET', 'DELETE'].includes(c.route.method));
    for (const { route, path } of withBodies) {
      await call(path, keyFor(route), 400, { method: route.method, body: '{"to": ' });
      await call(path, keyFor(route), 413, {
        method: route.method,
        body: JSON.stringify({ text: 'x'.repeat(1 << 20) }),
      });
      if (route.field !== 'restSendMessage') continue;
      const headers = { 'idempotency-key': 'openapi-409' };
      await call(path, keys.chatWrite, 202, {
        method: 'POST',
        body: { to: '050-123-4567', text: 'a' },
        headers,
      });
      await call(path, keys.chatWrite, 409, {
        method: 'POST',
        body: { to: '050-123-4567', text: 'b' },
        headers,
      });
    }
  });

  it('401 without a key or with a bad key', async () => {
    for (const { path, init } of await concretePaths()) {
      const body = await call(path, null, 401, init);
      expect(body.error.code).toBe('unauthenticated');
      await call(path, 'ck_not_a_key', 401, init);
    }
  });

  it('403 with a key lacking the scopes', async () => {
    for (const { route, path, init } of await concretePaths()) {
      const body = await call(path, wrongKeyFor(route), 403, init);
      expect(body.error.code).toBe('forbidden');
      expect(body.error.required_scopes.length).toBeGreaterThan(0);
    }
    const sub = await call(
      (await concretePaths()).find((c) => c.route.field === 'listPatientPayments')!.path,
      keys.patientsOnly,
      403,
    );
    expect(sub.error.required_scopes).toEqual(['payments:read']);
  });

  it('404 for an unknown id on every route with an id', async () => {
    for (const { route: r, init } of (await concretePaths()).filter((x) => x.route.path.includes(':id'))) {
      for (const id of ['pat_99999999', 'conv_99999999', 'in_99999999', 'out_99999999', '42', 'not-an-id']) {
        if (r.ids?.id === 'Patient' && id === 'pat_99999999') continue;
        const body = await call(`/v1${r.path.replace(':id', id)}`, keyFor(r), 404, init);
        expect(body.error.code).toBe('not_found');
      }
      if (r.ids?.id === 'Patient')
        await call(`/v1${r.path.replace(':id', 'pat_99999999')}`, keyFor(r), 404, init);
    }
  });

  it('422 for each invalid parameter or body, naming it', async () => {
    for (const { route, path, init } of await concretePaths()) {
      if (route.method === 'DELETE') {
        const r = await call(path, keyFor(route), 422, { ...init, headers: { 'if-match': 'garbage' } });
        expect(r.error).toMatchObject({ code: 'validation_failed', param: 'If-Match' });
        continue;
      }
      if (route.method !== 'GET') {
        const op = writeOf(route);
        const required = (requestBodies()[route.field].schema.required as string[] | undefined)?.[0];
        const cases: [unknown, string][] = op
          ? [
              [{ ...(init.body as object), colour: 'red' }, 'colour'],
              ...(required ? ([[{}, required]] as [unknown, string][]) : []),
              ['[1]', 'body'],
              // A write with its own check (the send's `parse`) is tried on its own refusals too.
              ...(badBodies[route.field] ?? []),
            ]
          : badBodies[route.field];
        for (const [body, param] of cases) {
          const r = await call(path, keyFor(route), 422, { ...init, body });
          expect(r.error, JSON.stringify(body)).toMatchObject({ code: 'validation_failed', param });
        }
        continue;
      }
      const op = doc.paths[oasPath(route.path)].get;
      const params = (op.parameters ?? []).filter((p: any) => p.in === 'query' && badValues[p.name]);
      for (const p of params) {
        const body = await call(
          `${path}?${p.name}=${encodeURIComponent(badValues[p.name])}`,
          keys.dental,
          422,
        );
        expect(body.error).toMatchObject({ code: 'validation_failed', param: p.name });
      }
      if (op.responses['422']) expect(params.length, `${route.field}: a 422 case`).toBeGreaterThan(0);
    }
  });

  it('422 for a parameter given twice where one value is expected', async () => {
    for (const { route, path } of await concretePaths()) {
      if (route.method !== 'GET') continue;
      const op = doc.paths[oasPath(route.path)].get;
      const p = (op.parameters ?? []).find(
        (x: any) => x.in === 'query' && !['limit', 'include'].includes(x.name),
      );
      if (!p) continue;
      const body = await call(`${path}?${p.name}=a&${p.name}=b`, keys.dental, 422);
      expect(body.error).toMatchObject({ code: 'validation_failed', param: p.name });
    }
  });

  it('405 with Allow for another method on every documented path, as MethodNotAllowed says', async () => {
    const component = doc.components.responses.MethodNotAllowed;
    const validate = validatorFor(component.content['application/json'].schema.$ref);
    for (const { route, path } of await concretePaths()) {
      const documented = Object.keys(doc.paths[oasPath(route.path)]).map((m) => m.toUpperCase());
      for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'].filter((m) => !documented.includes(m))) {
        for (const key of [null, keys.dental]) {
          const label = `${method} ${path}`;
          const res = await fetch(`${app.url}${path}`, {
            method,
            headers: key ? { authorization: `Bearer ${key}` } : {},
          });
          expect(res.status, label).toBe(405);
          expect(res.headers.get('content-type') ?? '', label).toContain('application/json');
          for (const h of Object.keys(component.headers))
            expect(res.headers.get(h), `${label} ${h}`).toBeTruthy();
          expect(res.headers.get('allow'), label).toBe(documented.join(', '));
          const body = await res.json();
          expect(validate(body), `${label}: ${ajv.errorsText(validate.errors)}`).toBe(true);
          expect(body.error.code, label).toBe('method_not_allowed');
          expect(body.error.request_id, label).toBe(res.headers.get('x-request-id'));
        }
      }
    }
  });

  it('every documented status except 405, 429, 500, 503 and 504 was observed', () => {
    // Observed elsewhere: 405 in test/http-headers.test.ts, 429 in test/rate-limit.test.ts (this
    // app runs without a limit), 503 and 504 in test/database-faults.test.ts.
    for (const r of restRoutes) {
      const op = doc.paths[oasPath(r.path)][r.method.toLowerCase()];
      const documented = Object.keys(op.responses)
        .map(Number)
        .filter((s) => ![405, 429, 500, 503, 504].includes(s));
      expect([...(seen.get(r.field) ?? [])].sort(), r.field).toEqual(expect.arrayContaining(documented));
    }
  });
});

describe('what the document says the server enforces', () => {
  const param = (route: (typeof restRoutes)[number], name: string) =>
    doc.paths[oasPath(route.path)][route.method.toLowerCase()].parameters?.find((p: any) => p.name === name);

  it('every operation refers to the shared 401, 405, 429, 500, 503 and 504 responses', () => {
    const NETWORK_WRITES = ['restSendMessage', 'restReactToMessage'];
    const shared = {
      401: 'Unauthenticated',
      405: 'MethodNotAllowed',
      429: 'RateLimited',
      500: 'InternalError',
      503: 'ServiceUnavailable',
      504: 'DeadlineExceeded',
    };
    for (const r of restRoutes) {
      const op = doc.paths[oasPath(r.path)][r.method.toLowerCase()];
      for (const [status, name] of Object.entries(shared)) {
        // The writes that reach the messaging network have their own 503, the shared one's
        // cause beside theirs (a live clinic without a network: docs/test-mode.md).
        if (status === '503' && NETWORK_WRITES.includes(r.field)) {
          const own = op.responses[status];
          expect(own.content['application/json'].example.error.code, r.field).toBe('network_not_configured');
          expect(own.description).toMatch(/`service_unavailable`/);
          expect(Object.keys(own.headers)).toContain('Retry-After');
          continue;
        }
        expect(op.responses[status], `${r.field} ${status}`).toEqual({
          $ref: `#/components/responses/${name}`,
        });
      }
      expect(Object.keys(op.responses[String(r.status)].headers), r.field).toEqual(
        expect.arrayContaining([
          'RateLimit-Policy',
          'RateLimit-Limit',
          'RateLimit-Remaining',
          'RateLimit-Reset',
          'X-Request-Id',
        ]),
      );
    }
    expect(Object.keys(doc.components.responses.ServiceUnavailable.headers)).toContain('Retry-After');
    expect(Object.keys(doc.components.responses.RateLimited.headers)).toContain('Retry-After');
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
  });

  it('path ids: real ids match the pattern; another form or an unknown id is the documented 404', async () => {
    const list = async (path: string) => (await app.get(path, keys.dental)).body.data.map((x: any) => x.id);
    const first = await idsAt('dental');
    const ids: Record<string, string[]> = {
      ...Object.fromEntries(Object.entries(first).map(([k, v]) => [k, [v]])),
      Patient: await list('/v1/patients?limit=100'),
      Conversation: await list('/v1/chat/conversations?limit=100'),
      Message: await list('/v1/chat/messages?limit=100'),
    };
    expect(
      ids.Message.some((id) => id.startsWith('in_')) && ids.Message.some((id) => id.startsWith('out_')),
    ).toBe(true);
    for (const { route: r, init } of (await concretePaths()).filter((x) => x.route.path.includes(':id'))) {
      const pattern = new RegExp(param(r, 'id').schema.pattern);
      for (const id of ids[r.ids?.id ?? 'Patient'] ?? []) expect(id, r.field).toMatch(pattern);
      const prefix = prefixes[r.ids?.id === 'Message' ? 'InboundMessage' : (r.ids?.id ?? 'Patient')];
      const other = prefix === 'pat' ? 'appt_1' : 'pat_1';
      for (const bad of [other, `${prefix}_01`, `${prefix}_x`, 'in_01', 'conv_x', '7']) {
        expect(bad).not.toMatch(pattern);
        await call(oasPath(r.path).replace('{id}', bad), keyFor(r), 404, init);
      }
    }
  });

  it('include: each value of the enum is accepted, any other is a 422; response_format likewise', async () => {
    for (const r of restRoutes) {
      const inc = param(r, 'include');
      const fmt = param(r, 'response_format');
      if (!inc && !fmt) continue;
      const kind = r.ids?.id ?? 'Patient';
      const id =
        kind === 'Patient'
          ? (await app.get('/v1/patients?limit=1', keys.vet)).body.data[0].id
          : (await idsAt('vet'))[kind];
      const base = oasPath(r.path).replace('{id}', id);
      for (const v of inc?.schema.items.enum ?? []) await call(`${base}?include=${v}`, keys.vet, 200);
      if (inc) await call(`${base}?include=${inc.schema.items.enum.join(',')}`, keys.vet, 200);
      if (inc) await call(`${base}?include=weight`, keys.vet, 422);
      for (const v of fmt?.schema.enum ?? []) await call(`${base}?response_format=${v}`, keys.vet, 200);
      if (fmt) await call(`${base}?response_format=verbose`, keys.vet, 422);
    }
  });

  it('cursors and filter ids the server hands out match their patterns', async () => {
    const list = restRoutes.find((r) => r.field === 'listPatients')!;
    const page = await call('/v1/patients?limit=1', keys.dental, 200);
    expect(page.next_cursor).toMatch(new RegExp(param(list, 'cursor').schema.pattern));
    await call('/v1/patients?limit=1&cursor=not%20base64!', keys.dental, 422);
    const treatments = restRoutes.find((r) => r.field === 'listPatientTreatments')!;
    const pattern = new RegExp(param(treatments, 'appointment_id').schema.pattern);
    const patient = page.data[0].id;
    const appts = await call(`/v1/patients/${patient}/appointments?limit=5`, keys.dental, 200);
    for (const a of appts.data) expect(a.id).toMatch(pattern);
  });

  it('the error codes of the Error schema are the codes the service has', () => {
    const codes = doc.components.schemas.Error.properties.error.properties.code.enum;
    expect(codes).toEqual(
      expect.arrayContaining(['validation_failed', 'service_unavailable', 'query_too_complex']),
    );
  });
});

describe('the validation can fail', () => {
  it('rejects deliberately wrong bodies', async () => {
    const listPatients = doc.paths['/v1/patients'].get;
    const page = (await app.get('/v1/patients?limit=2&response_format=detailed', keys.dental)).body;
    expect(() => assertDocumented(listPatients, 200, page, 'real')).not.toThrow();

    const wrongType = structuredClone(page);
    wrongType.data[0].id = 42;
    expect(() => assertDocumented(listPatients, 200, wrongType, 'id as a number')).toThrow(/PatientPage/);

    const missingRequired = structuredClone(page);
    delete missingRequired.data[0].id;
    expect(() => assertDocumented(listPatients, 200, missingRequired, 'no id')).toThrow(/required/);

    // Nullable keys are required too: one that goes missing fails, null passes.
    const noCursor = structuredClone(page);
    delete noCursor.next_cursor;
    expect(() => assertDocumented(listPatients, 200, noCursor, 'no next_cursor')).toThrow(/next_cursor/);
    const nullName = structuredClone(page);
    nullName.data[0].first_name = null;
    expect(() => assertDocumented(listPatients, 200, nullName, 'null first_name')).not.toThrow();
    const noName = structuredClone(page);
    delete noName.data[0].first_name;
    expect(() => assertDocumented(listPatients, 200, noName, 'no first_name')).toThrow(/first_name/);
    const noAddress = structuredClone(page);
    delete noAddress.data[0].address; // conditional (response_format=detailed): may be absent
    expect(() => assertDocumented(listPatients, 200, noAddress, 'no address')).not.toThrow();

    const appointments = doc.paths['/v1/patients/{id}/appointments'].get;
    let appts: any;
    for (const p of (await app.get('/v1/patients?limit=100', keys.dental)).body.data) {
      appts = (await app.get(`/v1/patients/${p.id}/appointments?limit=1`, keys.dental)).body;
      if (appts.data.length) break;
    }
    expect(appts.data.length).toBe(1);
    expect(() => assertDocumented(appointments, 200, appts, 'real')).not.toThrow();
    const noProvider = structuredClone(appts);
    delete noProvider.data[0].provider;
    expect(() => assertDocumented(appointments, 200, noProvider, 'no provider')).toThrow(/provider/);
    const noPatientPhone = structuredClone(appts);
    delete noPatientPhone.data[0].patient.phone;
    expect(() => assertDocumented(appointments, 200, noPatientPhone, 'no patient.phone')).toThrow(/phone/);

    const undocumented = structuredClone(page);
    undocumented.data[0].secret_note = 'x';
    expect(() => assertDocumented(listPatients, 200, undocumented, 'extra field')).toThrow(/additional/);

    const nullNonNull = (await app.get('/v1/catalog/branches', keys.dental)).body;
    nullNonNull.data[0].name = null;
    expect(() =>
      assertDocumented(doc.paths['/v1/catalog/branches'].get, 200, nullNonNull, 'null name'),
    ).toThrow();

    const error = { error: { code: 'not_found', message: 'x' } }; // no request_id
    expect(() => assertDocumented(doc.paths['/v1/patients/{id}'].get, 404, error, 'error')).toThrow(
      /request_id/,
    );
    // A status the operation does not document is a failure too.
    expect(() => assertDocumented(doc.paths['/v1/catalog/branches'].get, 404, error, 'undocumented')).toThrow(
      /not documented/,
    );
  });
});

describe('GET /v1/docs', () => {
  it('serves Swagger UI on /v1/openapi.json, and its assets load', async () => {
    const res = await fetch(`${app.url}/v1/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const html = await res.text();
    expect(html).toContain('/v1/openapi.json');
    const scripts = [...html.matchAll(/<script[^>]+src="([^"]+)"/g)].map((m) => m[1]);
    const styles = [...html.matchAll(/<link[^>]+href="([^"]+)"/g)].map((m) => m[1]);
    expect(scripts.length).toBeGreaterThan(0);
    for (const src of scripts) {
      const asset = await fetch(new URL(src, `${app.url}/v1/docs`));
      expect(asset.status, src).toBe(200);
      expect(asset.headers.get('content-type'), src).toContain('javascript');
      expect((await asset.text()).length, src).toBeGreaterThan(10_000);
    }
    for (const href of styles)
      expect((await fetch(new URL(href, `${app.url}/v1/docs`))).status, href).toBe(200);
  });

  it('answers an unknown docs asset with the standard JSON 404', async () => {
    const res = await fetch(`${app.url}/v1/docs/nope.js`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({
      error: {
        code: 'not_found',
        message: expect.any(String),
        request_id: res.headers.get('x-request-id'),
        doc_url: '/errors#not_found',
      },
    });
  });
});
