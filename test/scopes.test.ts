import {
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  getNamedType,
  isInterfaceType,
  isObjectType,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { scopesIn } from '../src/auth/scopes.ts';
import { restRoutes } from '../src/rest/routes.ts';
import { schemas } from '../src/schema/index.ts';
import { allWrites } from '../src/services/all-writes.ts';
import { allShapes, isResource } from '../src/services/resource.ts';
import { restFieldOf } from '../src/services/writes.ts';

/**
 * Scopes are checked on fields, not on types (see src/schema/builder.ts), so every field through
 * which a record can be reached must name the record's scopes. The records and their scopes come
 * from the resource definitions; the fields from both schemas and the REST route table. This
 * holds every field, present and future, to that.
 */
const recordScopes: Record<string, readonly string[]> = Object.fromEntries(
  allShapes().flatMap((s) => (isResource(s) && s.scopes.length ? [[s.name, s.scopes]] : [])),
);

/**
 * The record types a field returns: through lists, connections, edges (node), REST bodies (data)
 * and interfaces (each type implementing them, as for node(id:)).
 */
function recordsOf(schema: GraphQLSchema, type: GraphQLNamedType, seen = new Set<string>()): string[] {
  if (recordScopes[type.name]) return [type.name];
  if (seen.has(type.name)) return [];
  seen.add(type.name);
  if (isInterfaceType(type)) return schema.getPossibleTypes(type).flatMap((t) => recordsOf(schema, t, seen));
  if (!isObjectType(type)) return [];
  const fields = type.getFields();
  const inner = fields.edges ?? fields.node ?? fields.data;
  return inner ? recordsOf(schema, getNamedType(inner.type), seen) : [];
}

type FieldOf = GraphQLField<unknown, unknown>;

/** Shapes that are values, not records: defined with defineShape, so without scopes of their own. */
const valueShapes = new Set(
  allShapes()
    .filter((s) => !isResource(s))
    .map((s) => s.name),
);

/** The type inside a REST body (`{data: X}`), or the type itself. */
function dataTypeOf(type: GraphQLNamedType): string {
  if (!isObjectType(type)) return type.name;
  const data = type.getFields().data;
  return data ? getNamedType(data.type).name : type.name;
}

function scopesOf(field: FieldOf, record?: string): string[] {
  const authScopes = (field.extensions?.pothosOptions as { authScopes?: unknown })?.authScopes;
  // node(id:): the scope depends on the kind of id asked for.
  if (typeof authScopes === 'function') return scopesIn(authScopes(null, { id: { typename: record } }));
  return scopesIn(authScopes);
}

function fieldsReaching(schema: GraphQLSchema): { path: string; record: string; field: FieldOf }[] {
  const out: { path: string; record: string; field: FieldOf }[] = [];
  // A write answers the record it wrote (in its payload, `createPatient { patient }`), under the
  // write's own scope (chat:write is never granted beside chat:read): mutations are held to their
  // scopes by the test below.
  const mutation = schema.getMutationType();
  const payloads = new Set(Object.values(mutation?.getFields() ?? {}).map((f) => getNamedType(f.type).name));
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__') || type === mutation) continue;
    if (payloads.has(type.name) && !recordScopes[type.name]) continue;
    // Connection and body wrappers are reached through a field that is itself checked.
    if (type.name !== 'Query' && recordsOf(schema, type).length && !recordScopes[type.name]) continue;
    for (const field of Object.values(type.getFields())) {
      for (const record of recordsOf(schema, getNamedType(field.type))) {
        out.push({ path: `${type.name}.${field.name}`, record, field });
      }
    }
  }
  return out;
}

function missingScopes(fields: { path: string; record: string; field: FieldOf }[]): string[] {
  const missing: string[] = [];
  for (const { path, record, field } of fields) {
    const named = scopesOf(field, record);
    for (const scope of recordScopes[record])
      if (!named.includes(scope)) missing.push(`${path} (${record}, needs ${scope})`);
  }
  return missing;
}

describe('scope coverage', () => {
  it('records come from the definitions, each with its scopes', () => {
    expect(recordScopes.Patient).toEqual(['patients:read']);
    expect(recordScopes.AppointmentTypeItem).toEqual(['catalog:read']);
    expect(recordScopes.Vaccine).toEqual(['catalog:read', 'vaccines:read']);
  });

  for (const [name, schema] of Object.entries(schemas())) {
    it(`${name}: every field that reaches a record names the record's scopes`, () => {
      const fields = fieldsReaching(schema);
      expect(fields.length).toBeGreaterThan(5);
      expect(missingScopes(fields)).toEqual([]);
    });

    it(`${name}: every root field names a scope (a record defined without scopes is caught here)`, () => {
      const root = Object.values(schema.getQueryType()?.getFields() ?? {});
      const open = root.filter((f) => scopesOf(f, 'Patient').length === 0).map((f) => f.name);
      expect(open).toEqual([]);
      // A root field returns records (whose scopes it names), or a shape defined as a value
      // without records of its own (a media link), which it still guards by a scope above.
      const unscoped = root
        .filter((f) => recordsOf(schema, getNamedType(f.type)).length === 0)
        .filter((f) => !valueShapes.has(dataTypeOf(getNamedType(f.type))))
        .map((f) => f.name);
      expect(unscoped).toEqual([]);
    });
  }

  for (const [name, schema] of Object.entries(schemas())) {
    it(`${name}: every mutation names a write scope`, () => {
      const fields = Object.values(schema.getMutationType()?.getFields() ?? {});
      expect(fields.length).toBeGreaterThan(0);
      // webhooks:manage is the spec's one scope for subscriptions, their changes included.
      const writing = (s: string) => s.endsWith(':write') || s === 'webhooks:manage';
      const open = fields.filter((f) => !scopesOf(f).some(writing)).map((f) => f.name);
      expect(open).toEqual([]);
    });
  }

  it('every REST route is a Rest field that names the scopes of what it returns', () => {
    const fields = schemas().restSchema.getQueryType()?.getFields() ?? {};
    const mutations = schemas().restSchema.getMutationType()?.getFields() ?? {};
    const reads = restRoutes.filter((r) => r.method === 'GET');
    expect(Object.keys(fields).sort()).toEqual(reads.map((r) => r.field).sort());
    expect(Object.keys(mutations).sort()).toEqual(
      restRoutes
        .filter((r) => r.method !== 'GET')
        .map((r) => r.field)
        .sort(),
    );
    // Each write under its definition's scopes; the chat writes under chat:write.
    for (const r of restRoutes.filter((x) => x.method !== 'GET'))
      expect(scopesOf(mutations[r.field]), r.field).toEqual(
        allWrites().find((o) => restFieldOf(o) === r.field)?.scopes ?? ['chat:write'],
      );
    const reaching = reads.flatMap((r) =>
      recordsOf(schemas().restSchema, getNamedType(fields[r.field].type)).map((record) => ({
        path: `${r.method} /v1${r.path}`,
        record,
        field: fields[r.field],
      })),
    );
    const values = reads.filter((r) => valueShapes.has(dataTypeOf(getNamedType(fields[r.field].type))));
    // A provider's working hours and the free slots are values, not records (test/availability.test.ts).
    const availability = ['getProviderWorkingHours', 'listAvailability'];
    for (const f of availability) expect(values.map((r) => r.field)).toContain(f);
    expect(scopesOf(fields.getProviderWorkingHours)).toEqual(['catalog:read']);
    expect(scopesOf(fields.listAvailability)).toEqual(['appointments:read']);
    // Media links are values too: a message's and a call recording's.
    expect(values.map((r) => r.field).filter((f) => !availability.includes(f))).toEqual([
      'getCallRecording',
      'getMessageMedia',
    ]);
    expect(scopesOf(fields.getMessageMedia)).toEqual(['chat:read']);
    expect(scopesOf(fields.getCallRecording)).toEqual(['calls:read']);
    expect(reaching).toHaveLength(reads.length - values.length);
    expect(missingScopes(reaching)).toEqual([]);
  });
});
