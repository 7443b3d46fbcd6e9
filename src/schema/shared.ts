import type { GraphQLResolveInfo } from 'graphql';
import type { ListPage } from '../db/list.ts';
import type { RequestContext } from '../lib/request-context.ts';
import { builder } from './builder.ts';

/** A REST page `{data, next_cursor}` over items of one type (Rest sub-graph only). */
export function restPage<T>(name: string, item: any) {
  return builder.objectRef<{ data: T[]; next_cursor: string | null }>(name).implement({
    subGraphs: ['Rest'],
    fields: (t) => ({
      data: t.field({ type: [item], resolve: (p) => p.data as any }),
      next_cursor: t.exposeString('next_cursor', { nullable: true }),
    }),
  });
}

const ones = new Map<string, any>();

/** A REST single-object body `{data}` (Rest sub-graph only); one type per name, however many routes answer it. */
export function restOne<T>(name: string, item: any) {
  let ref = ones.get(name);
  if (!ref) {
    ref = builder.objectRef<{ data: T }>(name).implement({
      subGraphs: ['Rest'],
      fields: (t) => ({ data: t.field({ type: item, resolve: (p) => p.data as any }) }),
    });
    ones.set(name, ref);
  }
  return ref as ReturnType<typeof builder.objectRef<{ data: T }>>;
}

const lists = new Map<string, any>();

/** A bounded REST list `{data: [...]}` (Rest sub-graph only); one type per name, as restOne. */
export function restList<T>(name: string, item: any) {
  let ref = lists.get(name);
  if (!ref) {
    ref = builder.objectRef<{ data: T[] }>(name).implement({
      subGraphs: ['Rest'],
      fields: (t) => ({ data: t.field({ type: [item], resolve: (p) => p.data as any }) }),
    });
    lists.set(name, ref);
  }
  return ref as ReturnType<typeof builder.objectRef<{ data: T[] }>>;
}

export function toRestPage<T>(page: ListPage<T>) {
  return { data: page.items, next_cursor: page.nextCursor };
}

/**
 * A Relay edge. Its cursor is computed only if a query asks for it; a class keeps that getter on
 * the prototype instead of a closure per edge.
 */
class Edge<T> {
  readonly node: T;
  readonly #page: ListPage<T>;
  readonly #i: number;
  constructor(page: ListPage<T>, i: number) {
    this.node = page.items[i];
    this.#page = page;
    this.#i = i;
  }
  get cursor(): string {
    return this.#page.cursorAt(this.#i);
  }
}

/**
 * A connection's pageInfo; its cursors are computed only when selected. A class, not an object
 * literal with getters: a literal's getters are closures made per object, which V8 reaches from
 * the old generation (the object's own hidden class), and they kept every page's rows alive
 * through young-generation collections until the next full one.
 */
class PageInfo<T> {
  readonly hasNextPage: boolean;
  readonly hasPreviousPage = false;
  readonly #page: ListPage<T>;
  constructor(page: ListPage<T>) {
    this.hasNextPage = page.nextCursor !== null;
    this.#page = page;
  }
  get startCursor(): string | null {
    return this.#page.items.length ? this.#page.cursorAt(0) : null;
  }
  get endCursor(): string | null {
    const page = this.#page;
    return page.nextCursor ?? (page.items.length ? page.cursorAt(page.items.length - 1) : null);
  }
}

/** A Relay connection over one page of the list mechanism (src/db/list.ts). */
export function toConnection<T>(page: ListPage<T>) {
  return { edges: page.items.map((_, i) => new Edge(page, i)), pageInfo: new PageInfo(page) };
}

const connections = new Map<unknown, any>();

/**
 * The connection type of a node type, named after it (`PatientConnection`, its edges
 * `PatientEdge`) and shared by every field that pages it, as GitHub and Shopify name theirs.
 */
export function connectionOf(node: { name: string }) {
  let ref = connections.get(node);
  if (!ref) {
    ref = builder.connectionObject(
      {
        type: node as any,
        name: `${node.name}Connection`,
        description: `A page of ${node.name} objects (Relay cursor connection).`,
      },
      { name: `${node.name}Edge`, description: `One ${node.name} of a page, with its cursor.` },
    );
    connections.set(node, ref);
  }
  return ref;
}

/**
 * A field that pages `node` forward (first, after): its connection type and the two page
 * arguments beside the field's own. Backward paging (last, before) is not offered: the lists'
 * keysets run one way (src/db/list.ts).
 */
interface ConnectionFieldOptions {
  args?: Record<string, unknown>;
  resolve(parent: any, args: any, ctx: RequestContext, info: GraphQLResolveInfo): unknown;
  [option: string]: unknown;
}

export function connectionField(t: any, node: { name: string }, options: ConnectionFieldOptions) {
  return t.field({
    ...options,
    type: connectionOf(node),
    args: {
      ...options.args,
      first: t.arg.int({
        required: false,
        description: 'Page size, 1 to 100 (default 25).',
      }),
      after: t.arg.string({
        required: false,
        description: "The endCursor of the previous page (or an edge's cursor): the items after it.",
      }),
    },
  });
}
