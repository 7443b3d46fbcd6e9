import type { ObjectRef } from '@pothos/core';
import { readByIds } from '../db/list.ts';
import { entityNamed } from '../entities/index.ts';
import { tryParseId } from '../lib/ids.ts';
import { cached2 } from '../lib/memo.ts';
import { loader, type RequestContext, readsOf } from '../lib/request-context.ts';
import {
  type Field,
  type FieldType,
  isResource,
  type Resource,
  type Row,
  type Shape,
  shapeOf,
  viewOfSelection,
} from '../services/resource.ts';
import { builder } from './builder.ts';
import { fieldCost } from './cost.ts';

/**
 * GraphQL object types derived from the resource definitions (src/services/resource.ts): same
 * field names, types, nullability and descriptions as the REST resource. A field reads the
 * presented resource; a field the resource was presented without (a join or a non-core group
 * field that the read did not cover, e.g. in event data) is loaded by DataLoader, one statement
 * per batch.
 */
const refs = new Map<Shape, ObjectRef<any, Row>>();

export function objectType(shape: Shape): ObjectRef<any, Row> {
  const known = refs.get(shape);
  if (known) return known;
  const ref = builder.objectRef<Row>(shape.name);
  refs.set(shape, ref);
  ref.implement({
    ...(shape.description ? { description: shape.description } : {}),
    fields: (t) =>
      Object.fromEntries(Object.entries(shape.fields).map(([name, f]) => [name, fieldOf(t, shape, name, f)])),
  });
  return ref;
}

/** A resource that `node(id:)` can load: the Relay Node id is the REST id. */
export function nodeType(
  resource: Resource,
  loadOne: (id: string, ctx: RequestContext) => Promise<Row | null>,
) {
  if (refs.has(resource))
    throw new Error(`${resource.name} already has a GraphQL type; make it a node first.`);
  const ref = builder.objectRef<Row>(resource.name);
  refs.set(resource, ref);
  builder.node(ref, {
    ...(resource.description ? { description: resource.description } : {}),
    id: { resolve: (p) => p.id },
    loadOne: (id, ctx) => loadOne(String(id), ctx),
    fields: (t) =>
      Object.fromEntries(
        Object.entries(resource.fields)
          .filter(([name]) => name !== 'id')
          .map(([name, f]) => [name, fieldOf(t, resource, name, f)]),
      ),
  });
  return ref;
}

function typeOf(type: FieldType): any {
  if (Array.isArray(type)) return [typeOf(type[0])];
  return typeof type === 'string' ? type : objectType(type as Shape);
}

function descriptionOf(field: Field): string | undefined {
  const notes = [field.description];
  if (field.group === 'detailed') notes.push('Detailed format only in REST.');
  if (field.group.startsWith('include:')) notes.push(`REST embeds it with include=${field.group.slice(8)}.`);
  const text = notes.filter(Boolean).join(' ');
  return text || undefined;
}

function fieldOf(t: any, shape: Shape, name: string, field: Field) {
  const description = descriptionOf(field);
  const opts = {
    type: typeOf(field.type),
    nullable: field.nullable,
    ...(description ? { description } : {}),
    ...(shapeOf(field.type) ? { complexity: fieldCost(field) } : {}),
  };
  if (name === 'id' && field.type === 'ID') return t.exposeID('id', opts);
  const loadable =
    isResource(shape) && (field.source.kind === 'join' ? !field.source.fromParent : field.group !== 'core');
  if (!loadable) return t.expose(name, opts);
  const resource = shape;
  return t.field({
    ...opts,
    resolve: (parent: Row, _args: unknown, ctx: RequestContext) => {
      const v = parent[name];
      if (v !== undefined || ctx.rest) return v ?? null;
      return loadField(ctx, resource, name, parent.id);
    },
  });
}

const single = new WeakMap<Resource, Map<string, ReadonlySet<string>>>();

function selectionOf(resource: Resource, name: string): ReadonlySet<string> {
  return cached2(single, resource, name, () => new Set([name]));
}

async function loadField(ctx: RequestContext, resource: Resource, name: string, publicId: string) {
  const id = tryParseId(resource.kind, publicId);
  if (id == null) return null;
  const view = viewOfSelection(resource, selectionOf(resource, name));
  const row = await loader<number, Row | null>(ctx, `field:${view.key}`, (ids) =>
    readByIds(readsOf(ctx), entityNamed(resource.kind), view.read, ids),
  ).load(id);
  return row ? (view.present(row, ctx.principal)[name] ?? null) : null;
}
