import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GraphQLSchema } from 'graphql';
import { processRegularResult } from 'graphql-yoga';
import type { AppDeps } from './context.ts';
import {
  createGraphQLPipeline,
  type HeaderSource,
  type OperationParams,
  prepareOperation,
} from './executor.ts';

export type GraphQLHandler = ((req: IncomingMessage, res: ServerResponse) => Promise<void>) & {
  /** Requests executed on the direct path (tests assert which path a request took). */
  stats: { direct: number };
};

/** Bodies of the direct path; anything larger (or chunked) goes through Yoga, which caps at 25 MB. */
const DIRECT_MAX_BYTES = 1 << 20;

/**
 * /graphql over Node's http. Yoga serves every request, with one shortcut: the everyday request
 * (POST, JSON body with a query, a JSON answer) runs through Yoga's own envelop pipeline (its
 * parser and validation caches, error masking, our compiled executor) without converting the
 * Node request into a WHATWG Request and the result into a Response, which cost more CPU than
 * executing a page of patients. Whatever the shortcut does not recognise before execution
 * (GET, batches, invalid JSON or documents, subscriptions, other media types, cross-origin,
 * chunked or large bodies) is handed to Yoga whole, so the answers of both paths are Yoga's;
 * `test/graphql-direct.test.ts` compares them.
 */
export function createGraphQLHandler(schema: GraphQLSchema, deps: AppDeps): GraphQLHandler {
  const yoga = createGraphQLPipeline(schema, deps);
  const stats = { direct: 0 };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!directEligible(req)) return yoga(req, res);
    const body = await readBody(req);
    if (body === null) return;
    const params = plainParams(body);
    if (!params) return replay(req, res, body);
    const request: HeaderSource = { headers: { get: (name) => headerOf(req, name) } };
    const operation = prepareOperation(yoga, request, params);
    if (!operation) return replay(req, res, body);
    stats.direct++;
    const result = await operation.execute();
    if (!result.errors?.length && !result.extensions) {
      const text = JSON.stringify(result);
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end(text);
      return;
    }
    // Errors decide the status and lose their internals as Yoga would have it.
    await sendResponse(res, processRegularResult(result as any, yoga.fetchAPI, 'application/json'));
  }

  /** Hands a request whose body was read to Yoga. */
  async function replay(req: IncomingMessage, res: ServerResponse, body: Buffer) {
    const headers = new yoga.fetchAPI.Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const url = `http://${req.headers.host ?? 'localhost'}${req.url ?? '/graphql'}`;
    await sendResponse(res, await yoga.fetch(url, { method: req.method, headers, body }));
  }

  return Object.assign(handle, { stats });
}

function headerOf(req: IncomingMessage, name: string): string | null {
  const v = req.headers[name.toLowerCase()];
  return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
}

/** POST with a JSON body of known, modest length, answered as application/json. */
function directEligible(req: IncomingMessage): boolean {
  if (req.method !== 'POST' || !/^\/graphql(\?|$)/.test(req.url ?? '')) return false;
  // Cross-origin requests get Yoga's CORS headers.
  if (req.headers.origin !== undefined) return false;
  const type = req.headers['content-type'];
  if (!type || !/^application\/json\s*(;\s*charset=utf-8\s*)?$/i.test(type)) return false;
  const length = Number(req.headers['content-length']);
  if (!(length > 0 && length <= DIRECT_MAX_BYTES)) return false;
  const accept = req.headers.accept;
  return accept === undefined || /^\s*(\*\/\*|application\/json)\s*(;\s*charset=utf-8\s*)?$/i.test(accept);
}

function readBody(req: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    // A client that goes away mid-body gets no answer.
    req.on('error', () => resolve(null));
  });
}

/** `{query, variables?, operationName?}` of the expected types, or null for Yoga to judge. */
function plainParams(body: Buffer): OperationParams | null {
  let v: unknown;
  try {
    v = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) return null;
  const { query, variables, operationName, ...rest } = v as Record<string, unknown>;
  if (Object.keys(rest).length > 0 || typeof query !== 'string') return null;
  if (variables != null && (typeof variables !== 'object' || Array.isArray(variables))) return null;
  if (operationName != null && typeof operationName !== 'string') return null;
  return {
    query,
    variables: (variables ?? undefined) as Record<string, unknown> | undefined,
    operationName: operationName ?? undefined,
  };
}

async function sendResponse(res: ServerResponse, response: Response) {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const body = Buffer.from(await response.arrayBuffer());
  res.writeHead(response.status, headers);
  res.end(body);
}
