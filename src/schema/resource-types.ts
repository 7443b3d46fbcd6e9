import type { ObjectRef } from '@pothos/core';
import { readByIds } from '../db/list.ts';
import { entityNamed } from '../entities/index.ts';
import { tryParseId } from '../lib/ids.ts';
import { cached2 } from '../lib/memo.ts';
import { camelOf } from '../lib/names.ts';
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
import { enumTypeOf } from './enums.ts';

/**
 * GraphQL object types derived from the resource definitions (src/services/resource.ts): the
 * REST resource's fields, types, nullability and descriptions. The Public sub-graph names each
 * field in camelCase (`firstName`), the Rest one as REST does (`first_name`, which SOFA documents):
 * one type, a field per face where the names differ, both reading the presented resource's
 * snake_case key (src/lib/names.ts). Closed sets are enums (src/schema/enums.ts). A field reads the
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
    fields: (t) => fieldsOf(t, shape, Object.entries(shape.fields)),
  });
  return ref;
}

/**
 * The Rest face alone of a shape no read answers (a sample event's REST answer, WriteOperation's
 * `restShape`): REST's names, in the Rest schema only, so the OpenAPI document has it and the
 * GraphQL schema does not.
 */
export function restObjectType(shape: Shape): ObjectRef<any, Row> {
  const known = refs.get(shape);
  if (known) return known;
  const ref = builder.objectRef<Row>(shape.name);
  refs.set(shape, ref);
  ref.implement({
    subGraphs: ['Rest'],
    ...(shape.description ? { description: shape.description } : {}),
    fields: (t) =>
      Object.fromEntries(
        Object.entries(shape.fields).map(([name, f]) => [
          name,
          fieldOf(t, shape, name, f, { subGraphs: ['Rest'] }),
        ]),
      ),
  });
  return ref;
}

type Face = 'Public' | 'Rest';

/** What `namedPerFace` hands each field's maker: spread it into the field's options. */
export interface FaceOptions {
  subGraphs: Face[];
  extensions?: { restName: string };
}

/**
 * The fields of a type both faces share, each named as its face names it: once where the names
 * agree (`phone`), else a Rest field (`first_name`) and a Public one (`firstName`), each made by
 * `make` with the sub-graph it belongs to. For the definitions' types and hand-written ones alike.
 */
export function namedPerFace(fields: Record<string, (face?: FaceOptions) => unknown>): Record<string, any> {
  const out: Record<string, any> = {};
  for (const [name, make] of Object.entries(fields)) {
    const publicName = camelOf(name);
    if (publicName === name) out[name] = make();
    else {
      out[name] = make({ subGraphs: ['Rest'] });
      // restName: the executor reads the REST key inline (src/schema/execution-schema.ts).
      out[publicName] = make({ subGraphs: ['Public'], extensions: { restName: name } });
    }
  }
  return out;
}

function fieldsOf(t: any, shape: Shape, fields: [string, Field][]): Record<string, any> {
  return namedPerFace(
    Object.fromEntries(
      fields.map(([name, f]) => [name, (face?: FaceOptions) => fieldOf(t, shape, name, f, face)]),
    ),
  );
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
    // The presented id is the node id as it is (encodeGlobalID, src/schema/builder.ts): read inline.
    id: { resolve: (p) => p.id, extensions: { inline: true } },
    loadOne: (id, ctx) => loadOne(String(id), ctx),
    fields: (t) =>
      fieldsOf(
        t,
        resource,
        Object.entries(resource.fields).filter(([name]) => name !== 'id'),
      ),
  });
  return ref;
}

function typeOf(type: FieldType, field: Field): any {
  if (Array.isArray(type)) return [typeOf(type[0], field)];
  if (field.enum) return enumTypeOf(field.enum);
  return typeof type === 'string' ? type : objectType(type as Shape);
}

function descriptionOf(field: Field): string | undefined {
  const notes = [field.description ?? field.enum?.description];
  if (field.group === 'detailed') notes.push('Detailed format only in REST.');
  if (field.group.startsWith('include:')) notes.push(`REST embeds it with include=${field.group.slice(8)}.`);
  const text = notes.filter(Boolean).join(' ');
  return text || undefined;
}

function fieldOf(t: any, shape: Shape, name: string, field: Field, face?: FaceOptions) {
  const description = descriptionOf(field);
  const opts = {
    type: typeOf(field.type, field),
    ...face,
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
