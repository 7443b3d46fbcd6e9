import { readdirSync, readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { buildSchema, type GraphQLField, isInputObjectType, isObjectType } from 'graphql';
import { describe, expect, it, vi } from 'vitest';
import { generateContracts } from '../scripts/contracts.ts';
import { printWelcome } from '../src/server/welcome.ts';

/**
 * What the contracts say, held to what the service does (issue 37, "Contract text that misleads"):
 * the generated openapi.json and schema.graphql, no database. Each list's `from`/`to` names its own
 * records; the calls the start banner and the docs print pass the parameter schemas a validating
 * client or proxy (Prism) applies; the webhook URL rule says what a test clinic may use; the 202
 * answer of a sample event is documented with the `test` marker it carries.
 */
const contracts = generateContracts();
const doc = JSON.parse(contracts['openapi.json']);
const sdl = buildSchema(contracts['schema.graphql']);

const operations = Object.entries<any>(doc.paths).flatMap(([path, item]) =>
  Object.entries<any>(item).map(([method, op]) => ({ path, method, op })),
);

/** What a list's time filters bound, as its text must name it: its records, or availability's slots. */
const nounOf = (name: string) => (name === 'availability' ? 'slots' : name.toLowerCase());
/** `chatMessages` → `Messages`. */
const lastWord = (name: string) => /[A-Z]?[a-z]+$/.exec(name)?.[0] ?? name;

describe('from and to', () => {
  it("each REST list's text names its own records (only chat's lists are of messages)", () => {
    let lists = 0;
    for (const { path, op } of operations) {
      const params = (op.parameters ?? []).filter((p: any) => p.name === 'from' || p.name === 'to');
      if (!params.length) continue;
      lists++;
      const noun = nounOf(
        path
          .split('/')
          .filter((s) => s && !s.startsWith('{'))
          .at(-1) as string,
      );
      for (const p of params) {
        expect(p.description.toLowerCase(), `${path} ${p.name}`).toContain(noun);
        if (!path.startsWith('/v1/chat/'))
          expect(p.description, `${path} ${p.name}`).not.toMatch(/messages/i);
      }
    }
    // Appointments, treatments, payments, calls, animals, clients, availability and chat's two.
    expect(lists).toBe(9);
  });

  it("each GraphQL field's from and to name its own records", () => {
    let fields = 0;
    for (const type of Object.values(sdl.getTypeMap())) {
      if (!isObjectType(type) || type.name.startsWith('__')) continue;
      for (const field of Object.values<GraphQLField<unknown, unknown>>(type.getFields())) {
        const args = field.args.filter((a) => a.name === 'from' || a.name === 'to');
        if (!args.length) continue;
        fields++;
        for (const a of args)
          expect(a.description?.toLowerCase(), `${type.name}.${field.name}(${a.name})`).toContain(
            nounOf(lastWord(field.name)),
          );
      }
    }
    expect(fields).toBeGreaterThanOrEqual(8);
  });
});

// ---------- the calls the service prints, against the parameter schemas ----------

const ajv = new Ajv2020({ strict: true, allowUnionTypes: true });
((ajvFormats as any).default ?? ajvFormats)(ajv);
/** A query value is text: `limit=3` is read as the integer it spells, as a validating proxy reads it. */
const queryAjv = new Ajv2020({ strict: true, allowUnionTypes: true, coerceTypes: true });
((ajvFormats as any).default ?? ajvFormats)(queryAjv);

/** The start banner of a first start (src/server/welcome.ts), as `npm start` prints it. */
function banner(): string {
  const keys = Object.fromEntries(
    ['readAll', 'chatWrite', 'vetReadAll', 'clinicWrite'].map((role) => [role, { key: `cg_test_${role}` }]),
  );
  const out: string[] = [];
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: any) => {
    out.push(String(chunk));
    return true;
  });
  try {
    printWelcome('http://127.0.0.1:4000', { keys });
  } finally {
    write.mockRestore();
  }
  return out.join('');
}

/** Every /v1 GET with a query string in `text` whose values are given (no `…`, `<…>` or empty value). */
function callsIn(text: string): URL[] {
  return [...text.matchAll(/\/v1\/[\w/{}-]+\?[^\s"'`)]+/g)]
    .map((m) => new URL(m[0], 'http://127.0.0.1:4000'))
    .filter((u) => [...u.searchParams.values()].every((v) => v !== '' && !/[…<>]/.test(v)));
}

/** The documented GET whose path template matches `path`. */
function getOperation(path: string): any {
  for (const [template, item] of Object.entries<any>(doc.paths)) {
    if (item.get && new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path)) return item.get;
  }
  throw new Error(`no documented GET ${path}`);
}

describe('the calls the service and its docs print', () => {
  const docs = readdirSync(new URL('../docs/', import.meta.url)).filter((f) => f.endsWith('.md'));
  const texts: [string, string][] = [
    ['the start banner', banner()],
    ['README.md', readFileSync(new URL('../README.md', import.meta.url), 'utf8')],
    ...docs.map((f): [string, string] => [
      `docs/${f}`,
      readFileSync(new URL(`../docs/${f}`, import.meta.url), 'utf8'),
    ]),
  ];

  it('pass the declared parameter schemas (what a validating proxy such as Prism applies)', () => {
    const checked: string[] = [];
    for (const [where, text] of texts) {
      for (const url of callsIn(text)) {
        const op = getOperation(url.pathname);
        for (const [name, value] of url.searchParams) {
          const param = op.parameters.find((p: any) => p.name === name && p.in === 'query');
          expect(param, `${where}: ${url.pathname} takes no ${name}`).toBeDefined();
          const values = param.schema.type === 'array' && param.explode === false ? value.split(',') : value;
          const validate = queryAjv.compile(param.schema);
          expect(
            validate(values),
            `${where}: ${name}=${value} of ${url.pathname}: ${queryAjv.errorsText(validate.errors)}`,
          ).toBe(true);
          checked.push(`${url.pathname} ${name}`);
        }
      }
    }
    // The banner's availability call is one of them: a plain date for from and to.
    expect(checked).toEqual(expect.arrayContaining(['/v1/availability from', '/v1/availability to']));
  });

  it('the time filters declare both forms the services read: a date-time with its offset, or a date', () => {
    for (const { path, op } of operations) {
      for (const p of op.parameters ?? []) {
        if (!['from', 'to', 'updated_since', 'created_since'].includes(p.name)) continue;
        const validate = ajv.compile(p.schema);
        for (const ok of ['2026-12-01', '2026-12-01T09:00:00Z', '2026-12-01T09:00:00+02:00'])
          expect(validate(ok), `${path} ${p.name}=${ok}`).toBe(true);
        for (const bad of ['2026-12-01T09:00:00', 'tomorrow', '2026-13-01'])
          expect(validate(bad), `${path} ${p.name}=${bad}`).toBe(false);
      }
    }
  });
});

// ---------- the webhook URL rule ----------

/** Every description under `node`, with where it is. */
function descriptions(node: unknown, at: string, out: [string, string][] = []): [string, string][] {
  if (Array.isArray(node)) {
    for (const [i, n] of node.entries()) descriptions(n, `${at}[${i}]`, out);
  } else if (node && typeof node === 'object')
    for (const [k, v] of Object.entries(node)) {
      if (k === 'description' && typeof v === 'string') out.push([at, v]);
      else descriptions(v, `${at}.${k}`, out);
    }
  return out;
}

/** Whether a text says which URLs are refused or allowed. */
const statesRule = (text: string) => /https|\bhttp\b|loopback/.test(text);

/** A description that states where a subscription's url may point must give the test clinics' exception. */
function expectTestClinicException(where: string, text: string) {
  if (!statesRule(text)) return;
  expect(text, where).toMatch(/test clinic/);
  expect(text, where).toMatch(/plain http/);
  expect(text, where).toMatch(/loopback/);
}

describe('the webhook URL rule', () => {
  it('OpenAPI: wherever it says which URLs pass, it says what a test clinic may use too', () => {
    const webhookTexts = [
      ...Object.entries<any>(doc.paths)
        .filter(([path]) => path.startsWith('/v1/webhooks'))
        .flatMap(([path, item]) => descriptions(item, path)),
      ...descriptions(doc.components.schemas.WebhookSubscription, 'WebhookSubscription'),
    ];
    const stated = webhookTexts.filter(([, text]) => statesRule(text));
    // The url of a creation, of a change and of a subscription; a creation's operation and 422.
    expect(stated.length).toBeGreaterThanOrEqual(5);
    for (const [where, text] of stated) expectTestClinicException(where, text);
  });

  it('GraphQL: likewise, on the inputs, the type and the mutations', () => {
    const stated: [string, string][] = [];
    for (const type of Object.values(sdl.getTypeMap())) {
      if (!/Webhook/.test(type.name) || !(isObjectType(type) || isInputObjectType(type))) continue;
      for (const field of Object.values<any>(type.getFields()))
        if (field.description) stated.push([`${type.name}.${field.name}`, field.description]);
    }
    for (const name of ['createWebhook', 'updateWebhook']) {
      const field = sdl.getMutationType()?.getFields()[name];
      stated.push([name, field?.description ?? '']);
    }
    expect(stated.filter(([, text]) => statesRule(text)).length).toBeGreaterThanOrEqual(4);
    for (const [where, text] of stated) expectTestClinicException(where, text);
  });
});

describe('the rule for a URL the service downloads from (media, recordings)', () => {
  const downloads = (text: string) => /download/i.test(text) && statesRule(text);

  it('OpenAPI: wherever it says which URLs pass, it says what a test clinic may use too', () => {
    const stated = descriptions(doc, '').filter(([, text]) => downloads(text));
    // The send's media.url, the recording's url and its operation.
    expect(stated.length).toBeGreaterThanOrEqual(3);
    for (const [where, text] of stated) expectTestClinicException(where, text);
  });

  it('GraphQL: likewise, on every field, argument and input field', () => {
    const stated: [string, string][] = [];
    for (const type of Object.values(sdl.getTypeMap())) {
      if (type.name.startsWith('__') || !(isObjectType(type) || isInputObjectType(type))) continue;
      for (const field of Object.values<any>(type.getFields())) {
        if (field.description) stated.push([`${type.name}.${field.name}`, field.description]);
        for (const arg of field.args ?? [])
          if (arg.description) stated.push([`${type.name}.${field.name}(${arg.name})`, arg.description]);
      }
    }
    const about = stated.filter(([, text]) => downloads(text));
    expect(about.length).toBeGreaterThanOrEqual(2);
    for (const [where, text] of about) expectTestClinicException(where, text);
  });
});

describe("OpenAPI operations' descriptions", () => {
  it('every operation says what it does, beyond the scopes it needs', () => {
    const bare: string[] = [];
    for (const [path, item] of Object.entries<any>(doc.paths))
      for (const [method, op] of Object.entries<any>(item)) {
        if (!op?.responses) continue;
        const text = String(op.description ?? '').replace(/\n*Scopes: [^\n]*$/, '');
        if (text.trim().length < 20) bare.push(`${method.toUpperCase()} ${path}`);
      }
    expect(bare).toEqual([]);
  });

  it("REST's texts name REST's parameters, not GraphQL's", () => {
    for (const [path, item] of Object.entries<any>(doc.paths))
      for (const [method, op] of Object.entries<any>(item))
        if (op?.description)
          expect(op.description, `${method} ${path}`).not.toMatch(/\bupdatedSince\b|[a-z]+At\b/);
  });
});

// ---------- the 202 of a sample event ----------

describe("a sample event's 202", () => {
  it('documents the `test: true` its envelope carries, for both ways of sending one', () => {
    for (const [path, method] of [
      ['/v1/webhooks/{id}/test', 'post'],
      ['/v1/events', 'post'],
    ]) {
      const body = doc.paths[path][method].responses['202'].content['application/json'].schema;
      const bodySchema = doc.components.schemas[body.$ref.split('/').at(-1)];
      const envelope = doc.components.schemas[bodySchema.properties.data.$ref.split('/').at(-1)];
      expect(envelope.properties.test, `${method} ${path}`).toMatchObject({ type: 'boolean' });
      expect(envelope.required, `${method} ${path}`).toContain('test');
      // Beside the event's own fields, as its delivery carries them.
      expect(Object.keys(envelope.properties).sort()).toEqual(['created_at', 'data', 'id', 'test', 'type']);
    }
  });
});
