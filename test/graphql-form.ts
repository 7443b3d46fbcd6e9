import { camelOf, enumNameOf } from '../src/lib/names.ts';
import { type Field, type Row, type Shape, shapeOf } from '../src/services/resource.ts';

/**
 * A REST resource as GraphQL must answer it (docs/graphql.md, Naming), worked out from the
 * definition alone: each key renamed by `camelOf`, each value of a closed set by `enumNameOf`
 * (`bank_transfer` → `BANK_TRANSFER`), nested shapes alike, JSON values (an event's `data`) as they
 * are. A key the definition does not have fails: a REST answer and a GraphQL one compared through
 * it agree field for field, under the mapping's names, or not at all.
 */
export function graphqlOf(value: unknown, shape: Shape): any {
  if (value == null) return value;
  if (Array.isArray(value)) return value.map((v) => graphqlOf(v, shape));
  return Object.fromEntries(
    Object.entries(value as Row).map(([name, v]) => {
      const field = shape.fields[name];
      if (!field) throw new Error(`${shape.name} has no field ${name}`);
      return [camelOf(name), graphqlValueOf(v, field)];
    }),
  );
}

function graphqlValueOf(v: unknown, field: Field): unknown {
  if (v == null) return v;
  const inner = shapeOf(field.type);
  if (inner) return graphqlOf(v, inner);
  const set = field.enum;
  if (set) return Array.isArray(v) ? v.map((x) => enumNameOf(String(x))) : enumNameOf(String(v));
  return v;
}

/**
 * The inverse: a GraphQL answer (every field of `shape` selected) as REST names it, to be recorded
 * and compared as REST answers are. Strict too: each key must be `camelOf` of a field, every field
 * must be there, and each enum name must stand for a value of the field's set.
 */
export function restOf(value: unknown, shape: Shape): any {
  if (value == null) return value;
  if (Array.isArray(value)) return value.map((v) => restOf(v, shape));
  const obj = value as Row;
  const byCamel = new Map(Object.keys(shape.fields).map((name) => [camelOf(name), name]));
  for (const key of Object.keys(obj))
    if (!byCamel.has(key)) throw new Error(`${shape.name}: ${key} is not camelOf a field`);
  return Object.fromEntries(
    [...byCamel].map(([camel, name]) => {
      if (!(camel in obj)) throw new Error(`${shape.name}: ${camel} (${name}) was not answered`);
      return [name, restValueOf(obj[camel], shape.fields[name], `${shape.name}.${name}`)];
    }),
  );
}

function restValueOf(v: unknown, field: Field, where: string): unknown {
  if (v == null) return v;
  const inner = shapeOf(field.type);
  if (inner) return restOf(v, inner);
  const set = field.enum;
  if (!set) return v;
  const back = (x: unknown) => {
    const value = set.values.find((rest) => enumNameOf(rest) === x);
    if (value === undefined) throw new Error(`${where}: ${String(x)} is not a ${set.name} value`);
    return value;
  };
  return Array.isArray(v) ? v.map(back) : back(v);
}
