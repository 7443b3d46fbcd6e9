import type { IncomingMessage } from 'node:http';
import {
  type DocumentNode,
  type FragmentDefinitionNode,
  Kind,
  parse,
  type SelectionSetNode,
  visit,
} from 'graphql';
import { AppError } from '../lib/errors.ts';
import type { RequestContext, RequestInfo } from '../lib/request-context.ts';
import { readBody } from './body.ts';
import { anonymousContext } from './context.ts';
import type { OperationRunner } from './runner.ts';

/**
 * Introspection without a key: the schema is public (schema.graphql is in the repository, as the
 * OpenAPI document is served without a key), and GraphiQL's Docs pane and autocompletion need it
 * before anyone has pasted a key. A request without an Authorization header whose operations
 * select only `__schema`, `__type` and `__typename` at their root runs as the anonymous caller
 * (`anonymousContext`: no clinic, no scope), through the same pipeline and limits as any other
 * (tokens, depth, aliases, directives, cost). Anything else without a key is the 401 it always
 * was, counted as a failed authentication of the address.
 *
 * Its work is priced by what it answers, since its cost in points says nothing of it (one
 * document of 30 aliased `__schema` roots answered 10 MB for 30 points). Without a key:
 * - a document has one `__schema` or `__type` root, no alias (but of `__typename`), and nests
 *   `fields`, `inputFields`, `interfaces` and `possibleTypes` one deep, as the standard
 *   introspection query does (graphql-js allows three): its answer is then at most about the
 *   size of the full introspection (about 360 KB here, tens of ms of the event loop), where one
 *   document could ask for 10 MB; a key may ask for more;
 * - answers are kept by document (src/server/introspection-cache.ts): the schema is fixed, so
 *   the same document is executed once, whoever sends it;
 * - the client address spends the bytes it is sent from a budget per window
 *   (`anonymousBytesPerWindow`, src/auth/rate-limit.ts), at least ANONYMOUS_MIN_BYTES a request;
 *   an IPv6 address by its /64 (`budgetAddress`);
 * - at most MAX_NEW_ANONYMOUS_ANSWERS new answers are made at once in the process;
 * - a POST is `application/json` only, and what runs is the params checked here, re-serialised:
 *   a form-encoded body once passed the check as JSON and ran another `query=` in Yoga.
 */

/** A request without a key is read up to this many bytes: GraphiQL's introspection is about 2 KB. */
export const ANONYMOUS_MAX_BODY_BYTES = 64 * 1024;

const INTROSPECTION_FIELDS = new Set(['__schema', '__type', '__typename']);
const ROOT_FIELDS = new Set(['__schema', '__type']);

/** The only media type of a POST without a key: what Yoga reads as the JSON it was checked as. */
const JSON_BODY = /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

/** The params of a request without a key that were checked, and are all that runs. */
interface CheckedParams {
  query: string;
  operationName?: unknown;
  variables?: unknown;
  /** Passed on for Yoga to judge (no plugin here reads a document from it). */
  extensions?: unknown;
}

/**
 * The anonymous context of an introspection request without a key, and what runs: exactly the
 * params that were checked. A POST must be `application/json` (GraphiQL's and every client's
 * form): its body is handed on re-serialised from the checked params alone, as
 * `application/json` (`body`), so no other reading of the bytes (a form, `application/graphql`,
 * multipart; a second `query` field) can run another document. A GET's URL is rewritten to the
 * checked params. Otherwise throws the 401 a request without a key gets, or the 400 of a document
 * that asks for more than one root or uses aliases. Null: the client went away mid-body.
 */
export async function introspectionWithoutKey(
  runner: OperationRunner,
  req: IncomingMessage,
  scope: RequestInfo,
): Promise<{ ctx: RequestContext; body?: Buffer } | null> {
  const refused = () => runner.authenticate(scope, null, false);
  const maxBody = Math.min(ANONYMOUS_MAX_BODY_BYTES, runner.deps.limits.maxBodyBytes);
  let params: CheckedParams | null;
  if (req.method === 'GET') {
    const q = req.url?.indexOf('?') ?? -1;
    const search = new URLSearchParams(q < 0 ? '' : req.url?.slice(q + 1));
    params = checkedParams({
      query: search.get('query'),
      operationName: search.get('operationName') ?? undefined,
      variables: search.get('variables') ?? undefined,
      extensions: search.get('extensions') ?? undefined,
    });
  } else {
    if (!JSON_BODY.test(req.headers['content-type'] ?? '')) return { ctx: await refused() };
    if (Number(req.headers['content-length']) > maxBody) return { ctx: await refused() };
    const read = await readBody(req, maxBody);
    if (read === 'too large') return { ctx: await refused() };
    if (read === null) return null;
    try {
      params = checkedParams(JSON.parse(read.toString('utf8')));
    } catch {
      return { ctx: await refused() };
    }
  }
  const shape = params ? introspectionShape(params.query, runner.deps.limits.graphqlMaxTokens) : null;
  if (!params || !shape) return { ctx: await refused() };
  const ctx = anonymousContext(runner.deps, scope);
  const refusal = shapeRefusal(shape);
  if (refusal) {
    // A refusal is charged as any anonymous request is (a 429 once the budget is spent).
    await ctx.spend(1);
    throw refusal;
  }
  if (req.method === 'GET') {
    // What Yoga reads is what was checked: a query string of these params only.
    const path = (req.url ?? '/graphql').split('?')[0];
    const search = new URLSearchParams({ query: params.query });
    if (typeof params.operationName === 'string') search.set('operationName', params.operationName);
    if (typeof params.variables === 'string') search.set('variables', params.variables);
    if (typeof params.extensions === 'string') search.set('extensions', params.extensions);
    req.url = `${path}?${search}`;
    return { ctx };
  }
  const { query, operationName, variables, extensions } = params;
  return { ctx, body: Buffer.from(JSON.stringify({ query, operationName, variables, extensions })) };
}

/** `{query, operationName?, variables?, extensions?}` of a body or a query string; null without a string query. */
function checkedParams(v: unknown): CheckedParams | null {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return null;
  const { query, operationName, variables, extensions } = v as Record<string, unknown>;
  return typeof query === 'string' ? { query, operationName, variables, extensions } : null;
}

/** The 400 of a document without a key that asks for more than one answer's worth. */
function shapeRefusal(shape: IntrospectionShape): AppError | null {
  if (shape.roots > 1)
    return anonymousLimit(
      'introspection_roots',
      1,
      shape.roots,
      `Introspection without a key takes one __schema or __type root per document; this one has ${shape.roots}. Send them one by one, or send an API key.`,
    );
  if (shape.aliases > 0)
    return anonymousLimit(
      'introspection_aliases',
      0,
      shape.aliases,
      `Introspection without a key takes no aliases (but of __typename); this document has ${shape.aliases}. Leave them out, or send an API key.`,
    );
  if (shape.nesting > 1)
    return anonymousLimit(
      'introspection_depth',
      1,
      shape.nesting,
      `Introspection without a key nests fields, inputFields, interfaces and possibleTypes one deep, as the standard introspection query does; this document nests them ${shape.nesting} deep. Ask for a type by name (__type), or send an API key.`,
    );
  return null;
}

/** Whether a document has the shape introspection without a key may have (the cache keeps only these). */
export const anonymousShape = (shape: IntrospectionShape | null): boolean =>
  shape !== null && shapeRefusal(shape) === null;

/** `query_too_complex` (400) naming the limit, as the other GraphQL limits are refused. */
const anonymousLimit = (limit: string, max: number, actual: number, message: string) =>
  new AppError('query_too_complex', message, { details: { limit, max, actual } });

export interface IntrospectionShape {
  /** `__schema` and `__type` roots, one per response name, over all the operations. */
  roots: number;
  /** Aliases, `__typename`'s excepted. */
  aliases: number;
  /** Most `fields`, `inputFields`, `interfaces`, `possibleTypes` nested in one another. */
  nesting: number;
}

/** Introspection fields that list types or their fields: what multiplies an answer. */
const LISTS = new Set(['fields', 'inputFields', 'interfaces', 'possibleTypes']);

/**
 * What a document made only of introspection asks for. Null when it does not parse within the
 * token limit, or when an operation is not a query selecting only introspection fields at its
 * root (through fragments too).
 */
export function introspectionShape(query: string, maxTokens: number): IntrospectionShape | null {
  let doc: DocumentNode;
  try {
    doc = parse(query, { noLocation: true, maxTokens });
  } catch {
    return null;
  }
  return documentShape(doc);
}

/** `introspectionShape` of a parsed document. */
export function documentShape(doc: DocumentNode): IntrospectionShape | null {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  let aliases = 0;
  visit(doc, {
    Field(node) {
      if (node.alias && node.name.value !== '__typename') aliases++;
    },
  });
  // Each fragment's nesting once (a cycle fails validation; it counts nothing here).
  const fragmentNesting = new Map<string, number>();
  const nestingOf = (set: SelectionSetNode | undefined): number => {
    let most = 0;
    for (const s of set?.selections ?? []) {
      let n: number;
      if (s.kind === Kind.FIELD) n = (LISTS.has(s.name.value) ? 1 : 0) + nestingOf(s.selectionSet);
      else if (s.kind === Kind.INLINE_FRAGMENT) n = nestingOf(s.selectionSet);
      else {
        const name = s.name.value;
        if (!fragmentNesting.has(name)) {
          fragmentNesting.set(name, 0);
          fragmentNesting.set(name, nestingOf(fragments.get(name)?.selectionSet));
        }
        n = fragmentNesting.get(name) ?? 0;
      }
      most = Math.max(most, n);
    }
    return most;
  };
  let roots = 0;
  let nesting = 0;
  let operations = 0;
  for (const d of doc.definitions) {
    if (d.kind !== Kind.OPERATION_DEFINITION) continue;
    operations++;
    if (d.operation !== 'query') return null;
    // Fields of one response name merge into one: they are one root.
    const names = new Set<string>();
    const visited = new Set<string>();
    const rootOnly = (set: SelectionSetNode): boolean =>
      set.selections.every((s) => {
        if (s.kind === Kind.FIELD) {
          if (ROOT_FIELDS.has(s.name.value)) names.add(s.alias?.value ?? s.name.value);
          return INTROSPECTION_FIELDS.has(s.name.value);
        }
        if (s.kind === Kind.INLINE_FRAGMENT) return rootOnly(s.selectionSet);
        const f = fragments.get(s.name.value);
        if (!f) return false;
        if (visited.has(f.name.value)) return true;
        visited.add(f.name.value);
        return rootOnly(f.selectionSet);
      });
    if (!rootOnly(d.selectionSet)) return null;
    roots += names.size;
    nesting = Math.max(nesting, nestingOf(d.selectionSet));
  }
  return operations > 0 ? { roots, aliases, nesting } : null;
}
