import { type GraphQLSchema, getNamedType, isObjectType } from 'graphql';
import { groupsOfRequest } from '../services/groups-params.ts';
import { allShapes, type Group, type Groups, includesOf, type Shape, shapeOf } from '../services/resource.ts';

/**
 * SOFA selects every field of a route's type, so GraphQL answers null for the fields a REST
 * request did not ask for. This removes them again, as the resource definitions say: a field of
 * the `detailed` group unless response_format=detailed, of `include:<name>` unless include names
 * it. Keys are left out of the JSON (absent), not nulled. The resolvers validated both
 * parameters already (a bad value never reaches here).
 */
interface TypePlan {
  gated: [string, Group][];
  nested: [string, string][];
}

let plans: Map<string, TypePlan> | undefined;

function planOf(typeName: string): TypePlan | undefined {
  if (!plans) {
    plans = new Map();
    for (const shape of allShapes()) plans.set(shape.name, planFor(shape));
  }
  return plans.get(typeName);
}

let byName: Map<string, Shape> | undefined;
const shapeNamed = (name: string): Shape | undefined => {
  byName ??= new Map(allShapes().map((s) => [s.name, s]));
  return byName.get(name);
};

function planFor(shape: Shape): TypePlan {
  const gated: [string, Group][] = [];
  const nested: [string, string][] = [];
  for (const [name, field] of Object.entries(shape.fields)) {
    if (field.group !== 'core') gated.push([name, field.group]);
    const inner = shapeOf(field.type);
    if (inner) nested.push([name, inner.name]);
  }
  return { gated, nested };
}

// Set to undefined rather than deleted: JSON leaves the key out all the same, and `delete` turned
// every row into a slow dictionary object just before serialisation.
function prune(value: unknown, typeName: string, active: Groups): void {
  if (value == null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const v of value) prune(v, typeName, active);
    return;
  }
  const plan = planOf(typeName);
  if (!plan) return;
  const obj = value as Record<string, unknown>;
  for (const [name, group] of plan.gated) if (!active.has(group)) obj[name] = undefined;
  for (const [name, inner] of plan.nested) prune(obj[name], inner, active);
}

/** The item type of a Rest root field's body (`{data: X}` or `{data: [X], next_cursor}`). */
const itemTypes = new WeakMap<GraphQLSchema, Map<string, string | null>>();
function itemTypeOf(schema: GraphQLSchema, field: string): string | null {
  let byField = itemTypes.get(schema);
  if (!byField) {
    byField = new Map();
    itemTypes.set(schema, byField);
  }
  let name = byField.get(field);
  if (name === undefined) {
    const body = schema.getQueryType()?.getFields()[field];
    const bodyType = body && getNamedType(body.type);
    const data = bodyType && isObjectType(bodyType) ? bodyType.getFields().data : undefined;
    name = data ? getNamedType(data.type).name : null;
    byField.set(field, name);
  }
  return name;
}

export function pruneRestResult(
  schema: GraphQLSchema,
  field: string,
  variables: Record<string, unknown>,
  body: any,
): void {
  const item = body && itemTypeOf(schema, field);
  const shape = item ? shapeNamed(item) : undefined;
  if (!item || !shape) return;
  // The same parsing as the resolver's, which has refused bad values already.
  prune(body.data, item, groupsOfRequest(variables, includesOf(shape)));
}
