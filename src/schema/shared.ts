import type { Address, Contact } from '../entities/index.ts';
import type { Page } from '../lib/pagination.ts';
import type { NamedRef, OwnerResource, StatusRef } from '../services/presenters.ts';
import { builder } from './builder.ts';

/** Small embedded objects shared by many resources. */
export const NamedRefType = builder.objectRef<NamedRef>('NamedRef').implement({
  description: 'An embedded reference: id and name.',
  fields: (t) => ({ id: t.exposeID('id'), name: t.exposeString('name') }),
});

export const StatusRefType = builder.objectRef<StatusRef>('StatusRef').implement({
  description: 'An embedded status reference: id, name and color.',
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    color: t.exposeString('color', { nullable: true }),
  }),
});

export const AddressType = builder.objectRef<Address>('Address').implement({
  fields: (t) => ({
    line1: t.exposeString('line1', { nullable: true }),
    line2: t.exposeString('line2', { nullable: true }),
    city: t.exposeString('city', { nullable: true }),
    postal_code: t.exposeString('postal_code', { nullable: true }),
    country: t.exposeString('country', { nullable: true }),
  }),
});

export const ContactType = builder.objectRef<Contact>('Contact').implement({
  fields: (t) => ({
    type: t.exposeString('type'),
    value: t.exposeString('value'),
    label: t.exposeString('label', { nullable: true }),
  }),
});

export const OwnerType = builder.objectRef<OwnerResource>('Owner').implement({
  description: "An animal's owner at a veterinary clinic.",
  fields: (t) => ({
    id: t.exposeID('id'),
    first_name: t.exposeString('first_name', { nullable: true }),
    last_name: t.exposeString('last_name', { nullable: true }),
    phone: t.exposeString('phone', { nullable: true }),
    email: t.exposeString('email', { nullable: true }),
  }),
});

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

/** A REST single-object body `{data}` (Rest sub-graph only). */
export function restOne<T>(name: string, item: any) {
  return builder.objectRef<{ data: T }>(name).implement({
    subGraphs: ['Rest'],
    fields: (t) => ({ data: t.field({ type: item, resolve: (p) => p.data as any }) }),
  });
}

/** A bounded REST list `{data: [...]}` (Rest sub-graph only). */
export function restList<T>(name: string, item: any) {
  return builder.objectRef<{ data: T[] }>(name).implement({
    subGraphs: ['Rest'],
    fields: (t) => ({ data: t.field({ type: [item], resolve: (p) => p.data as any }) }),
  });
}

export function toRestPage<E, R>(page: Page<E>, present: (e: E) => R) {
  return { data: page.items.map(present), next_cursor: page.nextCursor };
}

/**
 * A Relay edge. Its cursor is computed only if a query asks for it; a class keeps that getter on
 * the prototype instead of a closure per edge.
 */
class Edge<E, R> {
  readonly node: R;
  readonly #item: E;
  readonly #cursorOf: (e: E) => string;
  constructor(item: E, node: R, cursorOf: (e: E) => string) {
    this.node = node;
    this.#item = item;
    this.#cursorOf = cursorOf;
  }
  get cursor(): string {
    return this.#cursorOf(this.#item);
  }
}

/** A Relay connection from one page of the shared keyset helper. */
export function toConnection<E, R>(page: Page<E>, present: (e: E) => R, cursorOf: (e: E) => string) {
  return {
    edges: page.items.map((e) => new Edge(e, present(e), cursorOf)),
    pageInfo: {
      hasNextPage: page.nextCursor !== null,
      hasPreviousPage: false,
      get startCursor() {
        return page.items.length ? cursorOf(page.items[0]) : null;
      },
      get endCursor() {
        return page.nextCursor ?? (page.items.length ? cursorOf(page.items[page.items.length - 1]) : null);
      },
    },
  };
}
