import { columnsOf } from './read-plans.ts';
import { allShapes, isResource, type Shape, shapeOf } from './resource-fields.ts';

interface PropMeta {
  kind: string;
  nullable?: boolean;
  targetMeta?: { className: string; properties: Record<string, PropMeta> };
}
type EntityMetaLookup = (entity: string) => { properties: Record<string, PropMeta> } | undefined;

/**
 * Fails when a definition names a column, relation or target that its entity does not have, so a
 * wrong source stops the service at start-up (and every test run), never answering null.
 */
export function checkResources(metaOf: EntityMetaLookup, shapes: readonly Shape[] = allShapes()): void {
  const errors: string[] = [];
  const checkShape = (shape: Shape, entity: string, seen: Set<Shape>) => {
    const meta = metaOf(entity);
    if (!meta) {
      errors.push(`${shape.name}: no entity ${entity}.`);
      return;
    }
    for (const [name, field] of Object.entries(shape.fields)) {
      const s = field.source;
      const where = `${shape.name}.${name} (${entity})`;
      const props = s.kind === 'column' || s.kind === 'ref' || s.kind === 'join' ? [s.prop] : [];
      if (s.kind === 'derived' || s.kind === 'id') props.push(...(s.needs ?? []));
      if (s.kind === 'key') errors.push(`${where}: f.key() belongs to shapes of JSON columns.`);
      for (const prop of props) {
        const p = meta.properties[prop];
        if (!p) errors.push(`${where}: ${entity} has no property ${prop}.`);
        else if ((s.kind === 'ref' || s.kind === 'join') && p.kind !== 'm:1')
          errors.push(`${where}: ${prop} is not a to-one relation.`);
        else if ((s.kind === 'ref' || s.kind === 'join') && p.targetMeta?.className !== s.target)
          errors.push(`${where}: ${prop} points at ${p.targetMeta?.className}, not ${s.target}.`);
        else if (s.kind === 'column' && p.kind !== 'scalar' && p.kind !== 'embedded')
          errors.push(`${where}: ${prop} is a relation; use f.ref or f.join.`);
        else if (s.kind !== 'derived' && p.nullable && !field.nullable && !field.whenNull)
          errors.push(`${where}: ${prop} may be NULL but the field is declared non-null.`);
      }
      if (s.kind === 'join' && !s.fromParent) {
        try {
          columnsOf(shapeOf(field.type) as Shape, where);
        } catch (e) {
          errors.push((e as Error).message);
        }
      }
      const nested = shapeOf(field.type);
      if (nested && s.kind === 'join' && !seen.has(nested)) {
        seen.add(nested);
        checkShape(nested, s.target, seen);
      }
      if (nested && s.kind === 'column') checkJsonShape(nested);
    }
  };
  const checkJsonShape = (shape: Shape) => {
    for (const [name, field] of Object.entries(shape.fields))
      if (field.source.kind !== 'key' && field.source.kind !== 'derived')
        errors.push(`${shape.name}.${name}: a shape of a JSON column reads keys (f.key).`);
  };
  for (const shape of shapes) if (isResource(shape)) checkShape(shape, shape.kind, new Set([shape]));
  if (errors.length)
    throw new Error(`Resource definitions do not match the entities:\n- ${errors.join('\n- ')}`);
}
