import { type Group, type Shape, shapeOf } from './resource-fields.ts';

/** A set of active groups. Canonical objects, so presenters can be memoised per set. */
export type Groups = ReadonlySet<Group>;

const groupSets = new Map<string, Groups>();

export function groups(...names: Group[]): Groups {
  const key = [...new Set(names)].sort().join(',');
  let set = groupSets.get(key);
  if (!set) {
    set = new Set<Group>(['core', ...names]);
    groupSets.set(key, set);
  }
  return set;
}

export const CORE: Groups = groups();

/** The groups of a REST request: response_format=detailed and include=<a>,<b>. */
export function restGroups(detailed: boolean, include: readonly string[]): Groups {
  return groups(
    ...(detailed ? (['detailed'] as Group[]) : []),
    ...include.map((i) => `include:${i}` as Group),
  );
}

/** Every group a shape's fields (and nested shapes') use: what a single read of everything needs. */
export function everyGroupOf(shape: Shape): Groups {
  const detailed = Object.values(shape.fields).some((f) => f.group === 'detailed');
  return restGroups(detailed, includesOf(shape));
}

export function fieldsIn(shape: Shape, active: Groups): string[] {
  return Object.keys(shape.fields).filter((n) => active.has(shape.fields[n].group));
}

/** The includes of a shape's own fields: what a record read on its own can embed (one join level). */
export function ownIncludesOf(shape: Shape): string[] {
  return Object.values(shape.fields).flatMap((f) =>
    f.group.startsWith('include:') ? [f.group.slice('include:'.length)] : [],
  );
}

const includesByShape = new WeakMap<Shape, readonly string[]>();

/**
 * The include names a shape's fields (and nested shapes') offer: `include:owner` → owner. Made
 * once per shape (definitions do not change): REST reads ask for it on every request.
 */
export function includesOf(shape: Shape): readonly string[] {
  let out = includesByShape.get(shape);
  if (!out) {
    out = Object.freeze(includesFrom(shape, new Set()));
    includesByShape.set(shape, out);
  }
  return out;
}

function includesFrom(shape: Shape, seen: Set<Shape>): string[] {
  if (seen.has(shape)) return [];
  seen.add(shape);
  const out = new Set<string>();
  for (const field of Object.values(shape.fields)) {
    if (field.group.startsWith('include:')) out.add(field.group.slice('include:'.length));
    const nested = shapeOf(field.type);
    if (nested) for (const i of includesFrom(nested, seen)) out.add(i);
  }
  return [...out];
}
