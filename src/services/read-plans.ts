import { cached2 } from '../lib/memo.ts';
import { type Resource, type Shape, shapeOf } from './resource-fields.ts';
import type { Groups } from './resource-groups.ts';

/** What a lean read of a resource needs: root columns and to-one joins with their columns. */
export interface ReadPlan {
  fields: string[];
  joins: Record<string, string[]>;
}

export function columnsOf(shape: Shape, where: string, active?: Groups): string[] {
  const out: string[] = [];
  for (const [name, field] of Object.entries(shape.fields)) {
    if (active && !active.has(field.group)) continue;
    const s = field.source;
    if (s.kind === 'id') continue;
    if (s.kind === 'column' || s.kind === 'ref') out.push(s.prop);
    else if (s.kind === 'derived') out.push(...s.needs);
    else if (s.kind === 'join')
      throw new Error(
        `resource ${where}: ${shape.name}.${name} is a join inside a join; lean reads join one level.`,
      );
  }
  return [...new Set(out)];
}

const plans = new WeakMap<Shape, Map<string, ReadPlan>>();

/**
 * The columns and joins that presenting `names` of a resource needs. A join marked `fromParent`
 * reads only the relation's id: the list attaches the parent record it already has.
 */
export function readPlan(resource: Resource, names: Iterable<string>, standalone?: Groups): ReadPlan {
  // The id is always presented (GraphQL node ids, cursors), so what it needs is always read.
  const list = [...new Set(['id', ...names])].filter((n) => resource.fields[n]).sort();
  const key = standalone ? `${list.join(',')}|${[...standalone].join(',')}` : list.join(',');
  return cached2(plans, resource, key, () => {
    const fields = new Set<string>();
    const joins: Record<string, string[]> = {};
    for (const name of list) {
      const s = resource.fields[name].source;
      if (s.kind === 'column' || s.kind === 'ref') fields.add(s.prop);
      else if (s.kind === 'derived' || (s.kind === 'id' && s.needs))
        for (const n of s.needs ?? []) fields.add(n);
      else if (s.kind === 'join') {
        if (s.fromParent && !standalone) fields.add(s.prop);
        else
          joins[s.prop] = columnsOf(
            shapeOf(resource.fields[name].type) as Shape,
            `${resource.name}.${name}`,
            standalone,
          );
      }
    }
    // Frozen: lean reads memoise a frozen plan's part of their query shapes (src/db/lean.ts).
    for (const columns of Object.values(joins)) Object.freeze(columns);
    return Object.freeze({ fields: Object.freeze([...fields]), joins: Object.freeze(joins) }) as ReadPlan;
  });
}
