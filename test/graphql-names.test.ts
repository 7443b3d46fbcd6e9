import { type GraphQLEnumType, type GraphQLObjectType, getNamedType, isObjectType } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { readScopes } from '../src/auth/scopes.ts';
import { camelOf, enumNameOf, isMappableName, snakeOf } from '../src/lib/names.ts';
import { executionTwin } from '../src/schema/execution-schema.ts';
import { schemas } from '../src/schema/index.ts';
import { allShapes, shapeOf } from '../src/services/resource.ts';
import { fixtures } from './fixtures.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * The one name mapping (src/lib/names.ts) and the executor that makes it free
 * (src/schema/execution-schema.ts): GraphQL answers camelCase names, read inline from the REST
 * rows' snake_case keys.
 */
let app: TestApp;
let key: string;
let rex: string;

beforeAll(async () => {
  app = await startTestApp();
  const c = await app.clinicWithKey('veterinary', readScopes);
  key = c.key;
  const f = fixtures(app.orm, c.clinicId);
  const cat = await f.catalog();
  const owner = await f.owner({ first: 'Noa', last: 'Levi', phone: '054-123-0000' });
  const p = await f.patient({
    first: 'Rex',
    last: 'Levi',
    phone: '054-123-0000',
    owner,
    species: cat.species,
  });
  await f.appointment(p, { branch: cat.branch, status: cat.status }, 60);
  rex = `pat_${p.id}`;
});

/** Every field of a definition in GraphQL's names, nested shapes included. */
function selection(shape: ReturnType<typeof shapeOf>): string {
  return `{ ${Object.entries(shape?.fields ?? {})
    .map(([name, f]) => {
      const inner = shapeOf(f.type);
      return inner ? `${camelOf(name)} ${selection(inner)}` : camelOf(name);
    })
    .join(' ')} }`;
}

/** A REST resource in GraphQL's names (the enums' values aside). */
function camelKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(camelKeys);
  if (v && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [camelOf(k), camelKeys(x)]));
  return v;
}

describe('GraphQL names', () => {
  it('every definition field name maps to camelCase and back', () => {
    const names = allShapes().flatMap((s) => Object.keys(s.fields));
    expect(names.length).toBeGreaterThan(100);
    for (const n of names) {
      expect(isMappableName(n), n).toBe(true);
      expect(snakeOf(camelOf(n))).toBe(n);
    }
  });

  it('maps names as written out by hand (the parity tests use the same functions, so this table is what holds them)', () => {
    const cases: [string, string][] = [
      ['first_name', 'firstName'],
      ['id_number', 'idNumber'],
      ['address_line1', 'addressLine1'],
      ['chat_conversations', 'chatConversations'],
      ['previous_secret_expires_at', 'previousSecretExpiresAt'],
      ['phone', 'phone'],
    ];
    for (const [snake, camel] of cases) {
      expect(camelOf(snake)).toBe(camel);
      expect(snakeOf(camel)).toBe(snake);
    }
    expect(
      ['bank_transfer', 'chat.message.sent', 'call.recording.available', 'free_text', 'inbound'].map(
        enumNameOf,
      ),
    ).toEqual(['BANK_TRANSFER', 'CHAT_MESSAGE_SENT', 'CALL_RECORDING_AVAILABLE', 'FREE_TEXT', 'INBOUND']);
    // Names a definition may not use: their camelCase does not map back.
    for (const bad of ['line_1', 'firstName', 'a__b', '_x']) expect(isMappableName(bad), bad).toBe(false);
  });

  it('the Public schema has no snake_case field and the Rest schema no camelCase one', () => {
    const { publicSchema, restSchema } = schemas();
    const fieldNames = (s: typeof publicSchema) =>
      Object.values(s.getTypeMap())
        .filter((t) => isObjectType(t) && !t.name.startsWith('__'))
        .flatMap((t) => Object.keys((t as any).getFields()).map((f) => `${t.name}.${f}`));
    expect(fieldNames(publicSchema).filter((f) => f.includes('_'))).toEqual([]);
    // Rest: the REST resource names, as the OpenAPI document shows them.
    const patient = restSchema.getType('Patient');
    expect(Object.keys((patient as any).getFields())).toContain('first_name');
    expect(Object.keys((patient as any).getFields())).not.toContain('firstName');
  });

  it('a patient read through GraphQL is the REST patient in camelCase, aliases and fragments too', async () => {
    const { Patient } = await import('../src/services/patients/patient.resource.ts');
    const fields = selection(Patient);
    const r = await app.gql(
      `query($id: ID!) { patient(id: $id) ${fields} again: patient(id: $id) { ...P n: firstName }
         node(id: $id) { id ... on Patient { lastName } } }
       fragment P on Patient { firstName birthDate createdAt }`,
      { id: rex },
      key,
    );
    expect(r.body.errors).toBeUndefined();
    const rest = (await app.get(`/v1/patients/${rex}?response_format=detailed&include=owner,species`, key))
      .body.data;
    const expected = camelKeys(rest) as Record<string, unknown>;
    const got = r.body.data.patient as Record<string, unknown>;
    for (const [k, v] of Object.entries(expected)) {
      if (k === 'gender' || k === 'contacts') continue; // enums inside: below
      expect(got[k], k).toEqual(v);
    }
    // Enums answer the UPPER_CASE name of the REST value.
    expect(got.contacts).toEqual(
      (expected.contacts as { type: string }[] | null)?.map((c) => ({ ...c, type: c.type.toUpperCase() })) ??
        null,
    );
    expect(got.gender).toBe((expected.gender as string | null)?.toUpperCase() ?? null);
    expect(r.body.data.node).toEqual({ id: rex, lastName: 'Levi' });
    expect(r.body.data.again).toEqual({
      firstName: 'Rex',
      birthDate: rest.birth_date,
      createdAt: rest.created_at,
      n: 'Rex',
    });
  });

  it('the executor reads renamed fields inline: the twin schema gives them the REST name and no resolver', () => {
    const { publicSchema } = schemas();
    const twin = executionTwin(publicSchema);
    const patient = twin.schema.getType('Patient') as any;
    expect(patient.getFields().first_name.resolve).toBeUndefined();
    expect(patient.getFields().firstName).toBeUndefined();
    // The Public schema itself keeps the name its users write.
    expect((publicSchema.getType('Patient') as any).getFields().firstName).toBeDefined();
  });

  it("the served schema runs on that twin: a renamed field's resolver is never called", async () => {
    const field = (schemas().publicSchema.getType('Patient') as GraphQLObjectType).getFields().firstName;
    const original = field.resolve;
    let calls = 0;
    field.resolve = (...args) => {
      calls++;
      return original?.(...args);
    };
    try {
      const r = await app.gql('query($id: ID!) { patient(id: $id) { firstName } }', { id: rex }, key);
      expect(r.body.data.patient.firstName).toBe('Rex');
    } finally {
      field.resolve = original;
    }
    expect(calls).toBe(0);
  });

  it('introspection shows the Public names (it runs on the Public schema)', async () => {
    const r = await app.gql('{ __type(name: "Patient") { fields { name } } }', {}, key);
    const names = r.body.data.__type.fields.map((f: { name: string }) => f.name);
    expect(names).toContain('firstName');
    expect(names).not.toContain('first_name');
  });

  it('a closed set is an enum whose UPPER_CASE names stand for the REST values', () => {
    const { publicSchema } = schemas();
    const gender = (publicSchema.getType('Patient') as GraphQLObjectType).getFields().gender;
    const type = getNamedType(gender.type) as GraphQLEnumType;
    expect(type.name).toBe('Gender');
    expect(type.getValues().map((v) => [v.name, v.value])).toEqual([
      ['MALE', 'male'],
      ['FEMALE', 'female'],
    ]);
  });
});
