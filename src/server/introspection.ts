import type { IncomingMessage } from 'node:http';
import { type DocumentNode, type FragmentDefinitionNode, Kind, parse, type SelectionSetNode } from 'graphql';
import type { RequestContext, RequestInfo } from '../lib/request-context.ts';
import { readBody } from './body.ts';
import { anonymousContext } from './context.ts';
import type { OperationRunner } from './runner.ts';

/**
 * Introspection without a key: the schema is public (schema.graphql is in the repository, as the
 * OpenAPI document is served without a key), and GraphiQL's Docs pane and autocompletion need it
 * before anyone has pasted a key. A request without an Authorization header whose operations
 * select only `__schema`, `__type` and `__typename` at their root runs as the anonymous caller
 * (`anonymousContext`: no clinic, no scope, the client address's rate-limit budget), through the
 * same pipeline and limits as any other (tokens, depth, aliases, directives, cost). Anything else
 * without a key is the 401 it always was, counted as a failed authentication of the address.
 */

/** A request without a key is read up to this many bytes: GraphiQL's introspection is about 2 KB. */
export const ANONYMOUS_MAX_BODY_BYTES = 64 * 1024;

const INTROSPECTION_FIELDS = new Set(['__schema', '__type', '__typename']);

/**
 * The anonymous context of an introspection request without a key, and the body it read (a POST);
 * otherwise throws the 401 a request without a key gets. Null: the client went away mid-body.
 */
export async function introspectionWithoutKey(
  runner: OperationRunner,
  req: IncomingMessage,
  scope: RequestInfo,
): Promise<{ ctx: RequestContext; body?: Buffer } | null> {
  const refused = () => runner.authenticate(scope, null, false);
  const maxBody = Math.min(ANONYMOUS_MAX_BODY_BYTES, runner.deps.limits.maxBodyBytes);
  let params: unknown;
  let body: Buffer | undefined;
  if (req.method === 'GET') {
    const search = new URLSearchParams(req.url?.slice(req.url.indexOf('?') + 1));
    params = { query: search.get('query') };
  } else {
    if (Number(req.headers['content-length']) > maxBody) return { ctx: await refused() };
    const read = await readBody(req, maxBody);
    if (read === 'too large') return { ctx: await refused() };
    if (read === null) return null;
    body = read;
    try {
      params = JSON.parse(read.toString('utf8'));
    } catch {
      return { ctx: await refused() };
    }
  }
  const query = (params as { query?: unknown } | null)?.query;
  if (typeof query !== 'string' || !introspectionOnly(query, runner.deps.limits.graphqlMaxTokens))
    return { ctx: await refused() };
  return { ctx: anonymousContext(runner.deps, scope), body };
}

/**
 * Whether every operation of `query` is a query selecting only introspection fields at its root
 * (through fragments too). A document that does not parse within the token limit is not.
 */
export function introspectionOnly(query: string, maxTokens: number): boolean {
  let doc: DocumentNode;
  try {
    doc = parse(query, { noLocation: true, maxTokens });
  } catch {
    return false;
  }
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const visited = new Set<string>();
  const rootOnly = (set: SelectionSetNode): boolean =>
    set.selections.every((s) => {
      if (s.kind === Kind.FIELD) return INTROSPECTION_FIELDS.has(s.name.value);
      if (s.kind === Kind.INLINE_FRAGMENT) return rootOnly(s.selectionSet);
      const f = fragments.get(s.name.value);
      if (!f) return false;
      // A cycle fails validation; visiting a fragment once is enough here.
      if (visited.has(f.name.value)) return true;
      visited.add(f.name.value);
      return rootOnly(f.selectionSet);
    });
  let operations = 0;
  for (const d of doc.definitions) {
    if (d.kind !== Kind.OPERATION_DEFINITION) continue;
    operations++;
    if (d.operation !== 'query' || !rootOnly(d.selectionSet)) return false;
  }
  return operations > 0;
}
