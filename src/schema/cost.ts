import { createComplexityRule } from '@pothos/plugin-complexity';
import {
  type DocumentNode,
  type GraphQLField,
  GraphQLList,
  GraphQLNonNull,
  type GraphQLOutputType,
  type GraphQLSchema,
  getNamedType,
  isLeafType,
  Kind,
  validate,
  visit,
} from 'graphql';
import { AppError } from '../lib/errors.ts';
import { costSpent } from '../lib/metrics.ts';
import type { RequestContext } from '../lib/request-context.ts';
import type { Field } from '../services/resource.ts';

/**
 * The one cost model, for GraphQL operations and REST requests alike (each route is measured as
 * the GraphQL operation SOFA documents for it: src/rest/direct.ts). A cost estimates the records an operation
 * reads, before it runs:
 * - a scalar costs nothing: it comes with its row;
 * - a record (an object field) costs 1; an object that is part of its parent's row (an address,
 *   a JSON shape, the parent itself) costs 0, as its resource definition says (`fieldCost`);
 * - a page (a field with `first` or `limit`) costs 1 plus its page size times what one item
 *   selects, so `patients(first: 100) { … appointments(first: 25) { … } }` multiplies;
 * - any other list of records counts as LIST_ESTIMATE items.
 * The same figure bounds a GraphQL operation (`graphqlMaxCost`) and is what a request spends
 * from its API key's rate-limit budget.
 */
export const DEFAULT_PAGE = 25;
const MAX_PAGE = 100;
/** Catalog lists are bounded but unpaginated: a clinic has tens of branches or providers. */
const LIST_ESTIMATE = 20;

type Cost = number | { field: number; multiplier: number };

function isList(type: GraphQLOutputType): boolean {
  return type instanceof GraphQLNonNull ? isList(type.ofType) : type instanceof GraphQLList;
}

/**
 * The page size an argument asks for. A value the service refuses (a 422 before that field reads
 * anything) counts as the default, so the refusal, not the rate limit, answers it.
 */
function pageSize(value: unknown): number {
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  return typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= MAX_PAGE ? n : DEFAULT_PAGE;
}

/** The default cost of a field (the builder's `fieldComplexity`). */
export function defaultFieldCost(
  args: Record<string, unknown>,
  _ctx: unknown,
  field: GraphQLField<unknown, unknown>,
): Cost {
  const named = getNamedType(field.type);
  if (isLeafType(named) || named.name === 'PageInfo') return 0;
  if (
    'first' in args ||
    'limit' in args ||
    field.args.some((a) => a.name === 'first' || a.name === 'limit')
  ) {
    return { field: 1, multiplier: pageSize(args.first ?? args.limit) };
  }
  if (isList(field.type)) {
    // The items of a page (multiplied by its size already): Relay edges, or a REST page's `data`.
    if (field.name === 'edges' || field.name === 'data') return { field: 1, multiplier: 1 };
    return { field: 1, multiplier: LIST_ESTIMATE };
  }
  // An edge's node is the item its edge counted.
  if (field.name === 'node' && field.args.length === 0) return 0;
  return 1;
}

/** The cost of a resource field whose type is a shape: only a record read through a join counts. */
export function fieldCost(field: Field): number {
  return field.source.kind === 'join' && !field.source.fromParent ? 1 : 0;
}

/**
 * The context arguments are mapped with while costing: the id decoder answers a placeholder
 * instead of refusing an id (that refusal belongs to execution, as a field error).
 */
export const costingContext = Object.freeze({ costing: true });
export const isCosting = (ctx: unknown) => ctx === costingContext;

/** The cost of one operation of `document` with these variables (the one named, or the only one). */
export function costOf(
  schema: GraphQLSchema,
  document: DocumentNode,
  variableValues: Record<string, unknown> | undefined,
  operationName: string | undefined | null,
): number {
  let cost = 0;
  const rule = createComplexityRule({
    context: costingContext,
    variableValues: variableValues ?? {},
    operationName: operationName ?? undefined,
    onResult: (state) => {
      cost = state.complexity;
    },
  });
  validate(schema, document, [rule]);
  return cost;
}

/**
 * Costs per document, by operation and the values of the variables that set page sizes (the
 * only ones a cost depends on): REST routes and repeated GraphQL documents are costed once.
 */
const costs = new WeakMap<DocumentNode, { pageVariables: string[]; byValues: Map<string, number> }>();

function pageVariablesOf(document: DocumentNode): string[] {
  const names = new Set<string>();
  visit(document, {
    Argument(node) {
      if ((node.name.value === 'first' || node.name.value === 'limit') && node.value.kind === Kind.VARIABLE) {
        names.add(node.value.name.value);
      }
    },
  });
  return [...names];
}

function cachedCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  variableValues: Record<string, unknown> | undefined,
  operationName: string | undefined | null,
): number {
  let entry = costs.get(document);
  if (!entry) {
    entry = { pageVariables: pageVariablesOf(document), byValues: new Map() };
    costs.set(document, entry);
  }
  let key = operationName ?? '';
  for (const name of entry.pageVariables) key += `\0${JSON.stringify(variableValues?.[name] ?? null)}`;
  let cost = entry.byValues.get(key);
  if (cost === undefined) {
    cost = costOf(schema, document, variableValues, operationName);
    if (entry.byValues.size >= 100) entry.byValues.clear();
    entry.byValues.set(key, cost);
  }
  return cost;
}

/** Refuses an operation over the cost limit before it runs; returns its cost otherwise. */
export function checkCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  variableValues: Record<string, unknown> | undefined,
  operationName: string | undefined | null,
  max: number,
): number {
  let cost: number;
  try {
    cost = cachedCost(schema, document, variableValues, operationName);
  } catch {
    // An argument the estimate could not read: execution will refuse it; charged as the maximum
    // meanwhile, so that a refused argument never makes the rest of an operation cheap.
    return max;
  }
  if (cost > max) throw limitExceeded('cost', max, cost);
  return cost;
}

/** The error of an operation over one of the GraphQL limits: names the limit and the figure. */
export function limitExceeded(limit: string, max: number, actual?: number): AppError {
  const figure = actual === undefined ? `more than ${max}` : String(actual);
  return new AppError(
    'query_too_complex',
    `This operation exceeds the ${limit} limit: ${figure}, at most ${max}. Ask for fewer records or split the operation.`,
    { details: { limit, max, ...(actual === undefined ? {} : { actual }) } },
  );
}

/**
 * Step 3 of the operation runner (src/server/runner.ts): refuses an operation over the cost limit before it runs, and spends its cost from the
 * key's rate-limit budget (`rate_limited` when spent). One cost model for GraphQL and REST.
 */
export async function chargeOperation(
  ctx: Pick<RequestContext, 'spend'> & { rest?: boolean },
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown> | undefined,
  operationName: string | undefined | null,
  maxCost: number,
): Promise<void> {
  const cost = checkCost(schema, document, variables, operationName, maxCost);
  await ctx.spend(cost);
  costSpent.inc({ face: ctx.rest ? 'rest' : 'graphql' }, cost);
}
