import {
  type FieldNode,
  type GraphQLField,
  type GraphQLResolveInfo,
  getArgumentValues,
  getNamedType,
  isObjectType,
  type SelectionSetNode,
} from 'graphql';
import { mayReach } from '../auth/access.ts';
import type { ListPage } from '../db/list.ts';
import { parseLimit } from '../db/pagination.ts';
import { tryParseId } from '../lib/ids.ts';
import type { RequestContext } from '../lib/request-context.ts';
import { type ChildList, firstPagesOfParents } from '../services/child-lists.ts';
import { type Row, viewOfSelection } from '../services/resource.ts';
import { serviceArgs } from './face-args.ts';
import { selectedFields } from './selection.ts';

/**
 * The first pages of a page of parents' child lists (a page of patients' appointments,
 * treatments, payments), planned from the document where the parents' list is resolved: for each
 * child list the query selects on the items, its arguments and selected columns are known before
 * any item resolves, so its first pages are read for the whole page in one statement and handed
 * to each item's field, which answers synchronously. Per item this saves the field's argument
 * mapping, its view lookup, a DataLoader key and two promises (the profile of a page of 100
 * patients: docs/performance.md). The item's field keeps its own resolver and Pothos' scope
 * check: a key without the list's scope gets null and a forbidden error as before, and nothing
 * is read for it here. Whatever this plan does not cover (a later page, an argument the service
 * refuses, the same list selected under the records' `patient`) resolves as before, through the
 * batched loader, with the same statement and answer.
 */
export interface ChildField {
  /** The field on the item (`appointments`). */
  field: string;
  list: ChildList;
}

const byType = new Map<unknown, readonly ChildField[]>();

/**
 * The child lists of a GraphQL object type (Patient: its appointments, treatments, payments), so
 * that every connection of that type plans them: `patients` and `animals` alike.
 */
export function registerChildFields(type: unknown, fields: readonly ChildField[]): void {
  byType.set(type, fields);
}

export const childFieldsOf = (type: unknown): readonly ChildField[] => byType.get(type) ?? [];

/** What the field on item `row`, as `info` runs it, reads from: its prefetched first page, if any. */
export function prefetchedPage(row: Row, info: GraphQLResolveInfo): ListPage<Row> | undefined {
  return (row as { [PAGES]?: Map<FieldNode, ListPage<Row>> })[PAGES]?.get(info.fieldNodes[0]);
}

// A symbol: the item's presented JSON and GraphQL's answer never show it.
const PAGES = Symbol('child pages');

interface Planned {
  child: ChildField;
  /** Every node of the response key (repeated selections merge into one field). */
  nodes: FieldNode[];
  field: GraphQLField<unknown, unknown>;
}

const plans = new WeakMap<FieldNode, Planned[]>();

/**
 * Reads the first pages of the child lists selected on `items` (the items of the connection
 * that `info` resolves, at `edges.node`) and attaches them for `prefetchedPage`.
 */
export async function prefetchChildPages(
  ctx: RequestContext,
  info: GraphQLResolveInfo,
  children: readonly ChildField[],
  items: readonly Row[],
): Promise<void> {
  if (!items.length || !children.length) return;
  const planned = planOf(info, children);
  if (!planned.length) return;
  await Promise.all(planned.map((p) => prefetchOne(ctx, info, p, items)));
}

async function prefetchOne(
  ctx: RequestContext,
  info: GraphQLResolveInfo,
  p: Planned,
  items: readonly Row[],
): Promise<void> {
  const { list } = p.child;
  if (!mayReach(ctx.principal, list.resource.scopes)) return;
  const source = list.resource.fields[list.parent]?.source;
  if (source?.kind !== 'join') return;
  const parents: { id: number; row: Row }[] = [];
  for (const row of items) {
    const id = tryParseId(source.target, row.id);
    if (id != null) parents.push({ id, row });
  }
  let limit: number;
  let filters: Record<string, number>;
  try {
    const args = serviceArgs(getArgumentValues(p.field, p.nodes[0], info.variableValues));
    if (args.after != null) return;
    limit = parseLimit(args.first ?? undefined, 'first');
    filters = list.filters?.(args) ?? {};
  } catch {
    // Refused by the item's own field, with the argument named as the caller wrote it.
    return;
  }
  const view = viewOfSelection(
    list.resource,
    selectedFields({ fieldNodes: p.nodes, fragments: info.fragments }, ['edges', 'node']),
  );
  const pages = await firstPagesOfParents(ctx, list, parents, view, filters, limit);
  parents.forEach(({ row }, i) => {
    const holder = row as { [PAGES]?: Map<FieldNode, ListPage<Row>> };
    holder[PAGES] ??= new Map();
    for (const node of p.nodes) holder[PAGES].set(node, pages[i]);
  });
}

/** The child lists the connection's `edges.node` selects, per document (its field node). */
function planOf(info: GraphQLResolveInfo, children: readonly ChildField[]): Planned[] {
  let out = plans.get(info.fieldNodes[0]);
  if (out) return out;
  out = [];
  const itemType = typeAt(getNamedType(info.returnType), ['edges', 'node']);
  if (itemType) {
    const byKey = new Map<string, FieldNode[]>();
    for (const node of nodesAt(info, ['edges', 'node'])) {
      if (!children.some((c) => c.field === node.name.value)) continue;
      const key = node.alias?.value ?? node.name.value;
      byKey.set(key, [...(byKey.get(key) ?? []), node]);
    }
    for (const nodes of byKey.values()) {
      const child = children.find((c) => c.field === nodes[0].name.value) as ChildField;
      const field = itemType.getFields()[child.field];
      if (field) out.push({ child, nodes, field });
    }
  }
  plans.set(info.fieldNodes[0], out);
  return out;
}

function typeAt(type: unknown, path: readonly string[]) {
  let t = type;
  for (const name of path) {
    if (!isObjectType(t)) return undefined;
    const f = t.getFields()[name];
    if (!f) return undefined;
    t = getNamedType(f.type);
  }
  return isObjectType(t) ? t : undefined;
}

/** The field nodes at `path` below the field `info` resolves, through fragments. */
function nodesAt(info: GraphQLResolveInfo, path: readonly string[]): FieldNode[] {
  let nodes: FieldNode[] = [...info.fieldNodes];
  for (const name of path) {
    nodes = nodes
      .flatMap((n) => (n.selectionSet ? fieldsIn(info, n.selectionSet) : []))
      .filter((f) => f.name.value === name);
  }
  return nodes.flatMap((n) => (n.selectionSet ? fieldsIn(info, n.selectionSet) : []));
}

function fieldsIn(info: GraphQLResolveInfo, set: SelectionSetNode): FieldNode[] {
  const out: FieldNode[] = [];
  const visit = (s: SelectionSetNode) => {
    for (const sel of s.selections) {
      if (sel.kind === 'Field') out.push(sel);
      else if (sel.kind === 'InlineFragment') visit(sel.selectionSet);
      else {
        const fragment = info.fragments[sel.name.value];
        if (fragment) visit(fragment.selectionSet);
      }
    }
  };
  visit(set);
  return out;
}
