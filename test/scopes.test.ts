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
import { schemas } from '../src/schema/index.ts';

/**
 * Scopes are checked on fields, not on types (see src/schema/builder.ts), so every field through
 * which a record can be reached must name the record's scope. This walks both schemas and holds
 * every such field, present and future, to that.
 */
const recordScopes: Record<string, string> = {
  Patient: 'patients:read',
  Appointment: 'appointments:read',
  Treatment: 'treatments:read',
  Payment: 'payments:read',
  Branch: 'catalog:read',
  Provider: 'catalog:read',
  Species: 'catalog:read',
  Breed: 'catalog:read',
  Vaccine: 'vaccines:read',
  Measurement: 'measurements:read',
};

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

function fieldsReaching(
  schema: GraphQLSchema,
): { path: string; record: string; field: GraphQLField<unknown, unknown> }[] {
  const out: { path: string; record: string; field: GraphQLField<unknown, unknown> }[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
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

describe('scope coverage', () => {
  for (const [name, schema] of Object.entries(schemas())) {
    it(`${name}: every field that reaches a record names the record's scope`, () => {
      const fields = fieldsReaching(schema);
      expect(fields.length).toBeGreaterThan(5);
      const missing: string[] = [];
      for (const { path, record, field } of fields) {
        const authScopes = (field.extensions?.pothosOptions as { authScopes?: unknown })?.authScopes;
        const scopes =
          typeof authScopes === 'function'
            ? // node(id:): the scope depends on the kind of id asked for.
              scopesIn(authScopes(null, { id: { typename: record } }))
            : scopesIn(authScopes);
        if (!scopes.includes(recordScopes[record]))
          missing.push(`${path} (${record}, needs ${recordScopes[record]})`);
      }
      expect(missing).toEqual([]);
    });
  }
});
