import {
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  GraphQLIncludeDirective,
  type GraphQLObjectType,
  type GraphQLResolveInfo,
  GraphQLSkipDirective,
  getArgumentValues,
  getDirectiveValues,
  getNamedType,
  isObjectType,
  type SelectionSetNode,
} from 'graphql';
import { mayReach } from '../auth/access.ts';
import { scopesIn } from '../auth/scopes.ts';
import type { ListPage } from '../db/list.ts';
import { parseLimit } from '../db/pagination.ts';
import { type IdKind, tryParseId } from '../lib/ids.ts';
import type { RequestContext } from '../lib/request-context.ts';
import { type ChildList, firstPagesOfParents } from '../services/child-lists.ts';
import { type Resource, type Row, type View, viewOfSelection } from '../services/resource.ts';
import { serviceArgs } from './face-args.ts';
import { selectedFields } from './selection.ts';

/**
 * The first pages of the child lists of a page of items, planned from the document where the
 * items' list is resolved, at every depth: for each child list the query selects on the items
 * (a page of patients' appointments, treatments, payments, chat conversations and messages; a
 * page of conversations' messages; a page of webhook subscriptions' deliveries), its arguments and
 * selected columns are known before any item resolves, so its first pages are read for the whole
 * page at once and handed to each item's field, which answers synchronously. Then the same for
 * the lists those pages' items select (`patients → chatConversations → messages`): the pages of
 * one level are read for all of that level's items together, so a nested query costs a fixed
 * number of statements whatever the size of its pages. Per item this saves the field's argument
 * mapping, its view lookup, a DataLoader key and two promises (the profile of a page of 100
 * patients: docs/performance.md). The item's field keeps its own resolver and Pothos' scope
 * check: a key without the field's scopes gets null and a forbidden error as before, and nothing
 * is read for it here (nor below it). Whatever this plan does not cover (a later page, a filter
 * the list's reader does not batch, an argument the service refuses, the lists of a single
 * `patient(id:)` or `conversation(id:)`) resolves as before, through the field's own resolver and
 * its batched loader, with the same answer (test/child-pages-depth.test.ts).
 */
export interface ChildField {
  /** The field on the item (`appointments`): a connection whose items are `resource`'s records. */
  field: string;
  resource: Resource;
  /**
   * How the first pages of many items' lists are read at once for `args` (the field's arguments,
   * named as the services name them): a reader, or undefined when the plan does not cover these
   * arguments (a later page, a filter), which the field then reads on its own. Throws for
   * arguments the field refuses: the plan leaves them to the field, which reports them.
   */
  plan(ctx: RequestContext, args: Record<string, any>): FirstPages | undefined;
}

/**
 * The first pages of `items`' lists, in their order (undefined: that item's field reads its own),
 * their items presented by `view`.
 */
export type FirstPages = (items: readonly Row[], view: View) => Promise<(ListPage<Row> | undefined)[]>;

/**
 * A child field over a child list (src/services/child-lists.ts): the parent's rows are the
 * items, each page's items show `parentOf(item)` as their parent (default: the item as
 * presented), and the list's filters map the field's filter arguments.
 */
export function childListField(
  field: string,
  list: ChildList,
  opts: { parentOf?: (item: Row) => Row } = {},
): ChildField {
  const source = list.resource.fields[list.parent]?.source;
  if (source?.kind !== 'join') {
    throw new Error(`${list.resource.name}.${list.parent}: a child list names its parent with a join.`);
  }
  const parentOf = opts.parentOf ?? ((item: Row) => item);
  return {
    field,
    resource: list.resource,
    plan: (ctx, args) => {
      if (args.after != null) return undefined;
      const limit = parseLimit(args.first ?? undefined, 'first');
      const filters = list.filters?.(args) ?? {};
      return async (items, view) => {
        const parents: { id: number; row: Row; at: number }[] = [];
        items.forEach((item, at) => {
          const id = tryParseId(source.target, item.id);
          if (id != null) parents.push({ id, row: parentOf(item), at });
        });
        const out: (ListPage<Row> | undefined)[] = new Array(items.length);
        if (!parents.length) return out;
        const pages = await firstPagesOfParents(ctx, list, parents, view, filters, limit);
        parents.forEach((p, i) => {
          out[p.at] = pages[i];
        });
        return out;
      };
    },
  };
}

/**
 * A reader of first pages keyed by the items' numbers (their public ids, of `kind`): `read` answers
 * a page per number (null: that item's field reads its own, and reports what it finds).
 */
export function ofItemNumbers(
  kind: IdKind,
  read: (ids: readonly number[], view: View) => Promise<readonly (ListPage<Row> | null)[]>,
): FirstPages {
  return async (items, view) => {
    const at: number[] = [];
    const ids: number[] = [];
    items.forEach((item, i) => {
      const id = tryParseId(kind, item.id);
      if (id != null) {
        at.push(i);
        ids.push(id);
      }
    });
    const out: (ListPage<Row> | undefined)[] = new Array(items.length);
    if (!ids.length) return out;
    const pages = await read(ids, view);
    at.forEach((i, k) => {
      out[i] = pages[k] ?? undefined;
    });
    return out;
  };
}

/** By the GraphQL type's name: the schema that executes is a twin of the built one (execution-schema.ts). */
const byType = new Map<string, ChildField[]>();

/**
 * Child fields of a GraphQL object type (Patient: its appointments, treatments, payments, chat
 * conversations and messages), so that every connection of that type plans them, at any depth:
 * `patients` and `animals` alike, and a patient's `chatConversations` plans its conversations'
 * `messages`. Several modules may register fields of one type; a field once.
 */
export function registerChildFields(type: { name: string }, fields: readonly ChildField[]): void {
  const known = byType.get(type.name) ?? [];
  for (const f of fields) {
    if (known.some((k) => k.field === f.field)) throw new Error(`${type.name}.${f.field} registered twice.`);
    known.push(f);
  }
  byType.set(type.name, known);
}

export const childFieldsOf = (type: { name: string }): readonly ChildField[] => byType.get(type.name) ?? [];

/** What the field on item `row`, as `info` runs it, reads from: its prefetched first page, if any. */
export function prefetchedPage(row: Row, info: GraphQLResolveInfo): ListPage<Row> | undefined {
  return (row as Holder)[PAGES]?.get(info.fieldNodes[0]);
}

// A symbol: the item's presented JSON and GraphQL's answer never show it.
const PAGES = Symbol('child pages');

interface Holder {
  [PAGES]?: Map<FieldNode, ListPage<Row>>;
}

/** What a plan needs of the document being executed. */
interface Doc {
  fragments: Record<string, FragmentDefinitionNode>;
  variableValues: GraphQLResolveInfo['variableValues'];
}

interface Planned {
  child: ChildField;
  /** Every node of the response key (repeated selections merge into one field). */
  nodes: FieldNode[];
  field: GraphQLField<unknown, unknown>;
  /** The scopes the field's `authScopes` name (Pothos checks the same on each item). */
  scopes: readonly string[];
}

/**
 * Reads the first pages of the child lists selected on `items` (the items of the connection
 * that `info` resolves, at `edges.node`), and below them the lists their items select, level by
 * level, and attaches them for `prefetchedPage`.
 */
export async function prefetchChildPages(
  ctx: RequestContext,
  info: GraphQLResolveInfo,
  items: readonly Row[],
): Promise<void> {
  const doc = { fragments: info.fragments, variableValues: info.variableValues };
  await prefetchLevel(ctx, doc, info.fieldNodes, info.returnType, items);
}

/** The child lists that the connection of `nodes` (of `type`) selects on `items`, and below. */
async function prefetchLevel(
  ctx: RequestContext,
  doc: Doc,
  nodes: readonly FieldNode[],
  type: unknown,
  items: readonly Row[],
): Promise<void> {
  if (!items.length) return;
  const planned = planOf(doc, nodes, type);
  if (!planned.length) return;
  await Promise.all(planned.map((p) => prefetchOne(ctx, doc, p, items)));
}

async function prefetchOne(ctx: RequestContext, doc: Doc, p: Planned, items: readonly Row[]): Promise<void> {
  if (!mayReach(ctx.principal, p.scopes)) return;
  // A field this request's variables leave out (`@include(if: $x)` on it) is not read for it.
  if (!p.nodes.some((n) => included(n, doc.variableValues))) return;
  let read: FirstPages | undefined;
  try {
    read = p.child.plan(ctx, serviceArgs(getArgumentValues(p.field, p.nodes[0], doc.variableValues)));
  } catch {
    // Refused by the item's own field, with the argument named as the caller wrote it.
    return;
  }
  if (!read) return;
  const view = viewOfSelection(
    p.child.resource,
    selectedFields({ fieldNodes: p.nodes, fragments: doc.fragments }, ['edges', 'node']),
  );
  const pages = await read(items, view);
  pages.forEach((page, i) => {
    if (!page) return;
    const holder = items[i] as Holder;
    holder[PAGES] ??= new Map();
    for (const node of p.nodes) holder[PAGES].set(node, page);
  });
  // The next level: the lists these pages' items select, for every item of them once (parents
  // sharing a page share its items). Most levels select none: nothing is gathered for them.
  const next = planOf(doc, p.nodes, p.field.type);
  if (!next.length) return;
  const below = new Set<Row>();
  for (const page of pages) for (const item of page?.items ?? []) below.add(item);
  const rows = [...below];
  if (rows.length) await Promise.all(next.map((n) => prefetchOne(ctx, doc, n, rows)));
}

/** Plans per document, by the connection's first field node (then checked against all of them). */
const plans = new WeakMap<FieldNode, { nodes: readonly FieldNode[]; planned: Planned[] }[]>();

/** The registered child fields the connection's `edges.node` selects. */
function planOf(doc: Doc, nodes: readonly FieldNode[], type: unknown): Planned[] {
  const known = plans.get(nodes[0]) ?? [];
  const hit = known.find((k) => k.nodes.length === nodes.length && k.nodes.every((n, i) => n === nodes[i]));
  if (hit) return hit.planned;
  const planned: Planned[] = [];
  const itemType = typeAt(getNamedType(type as never), ['edges', 'node']);
  const children = itemType ? childFieldsOf(itemType) : [];
  if (itemType && children.length) {
    const byKey = new Map<string, FieldNode[]>();
    for (const node of nodesAt(doc, nodes, ['edges', 'node'])) {
      if (!children.some((c) => c.field === node.name.value)) continue;
      const key = node.alias?.value ?? node.name.value;
      byKey.set(key, [...(byKey.get(key) ?? []), node]);
    }
    for (const keyNodes of byKey.values()) {
      const child = children.find((c) => c.field === keyNodes[0].name.value) as ChildField;
      const field = itemType.getFields()[child.field];
      const scopes = field && scopesOf(field);
      if (field && scopes) planned.push({ child, nodes: keyNodes, field, scopes });
    }
  }
  known.push({ nodes, planned });
  plans.set(nodes[0], known);
  return planned;
}

/**
 * The scopes a field's `authScopes` name (`allOf`), or undefined for a check the plan cannot
 * make beforehand (a function of the item): that field is left to its own resolver.
 */
function scopesOf(field: GraphQLField<unknown, unknown>): readonly string[] | undefined {
  const authScopes = (field.extensions?.pothosOptions as { authScopes?: unknown } | undefined)?.authScopes;
  if (authScopes === undefined) return [];
  const scopes = scopesIn(authScopes);
  const declared = (authScopes as { reach?: unknown } | null)?.reach;
  return Array.isArray(declared) && Object.keys(authScopes as object).length === 1 ? scopes : undefined;
}

function typeAt(type: unknown, path: readonly string[]): GraphQLObjectType | undefined {
  let t = type;
  for (const name of path) {
    if (!isObjectType(t)) return undefined;
    const f = t.getFields()[name];
    if (!f) return undefined;
    t = getNamedType(f.type);
  }
  return isObjectType(t) ? t : undefined;
}

/** The field nodes at `path` below `nodes`, through fragments. */
function nodesAt(doc: Doc, nodes: readonly FieldNode[], path: readonly string[]): FieldNode[] {
  let at: FieldNode[] = [...nodes];
  for (const name of path) {
    at = at
      .flatMap((n) => (n.selectionSet ? fieldsIn(doc, n.selectionSet) : []))
      .filter((f) => f.name.value === name);
  }
  return at.flatMap((n) => (n.selectionSet ? fieldsIn(doc, n.selectionSet) : []));
}

/** Whether `@skip`/`@include` on the field node itself keep it, with these variables. */
function included(node: FieldNode, variables: Doc['variableValues']): boolean {
  if (!node.directives?.length) return true;
  if (getDirectiveValues(GraphQLSkipDirective, node, variables)?.if === true) return false;
  return getDirectiveValues(GraphQLIncludeDirective, node, variables)?.if !== false;
}

function fieldsIn(doc: Doc, set: SelectionSetNode): FieldNode[] {
  const out: FieldNode[] = [];
  const visit = (s: SelectionSetNode) => {
    for (const sel of s.selections) {
      if (sel.kind === 'Field') out.push(sel);
      else if (sel.kind === 'InlineFragment') visit(sel.selectionSet);
      else {
        const fragment = doc.fragments[sel.name.value];
        if (fragment) visit(fragment.selectionSet);
      }
    }
  };
  visit(set);
  return out;
}
