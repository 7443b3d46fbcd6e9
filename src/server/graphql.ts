import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type DocumentNode,
  type ExecutionResult,
  GraphQLError,
  type GraphQLSchema,
  getOperationAST,
} from 'graphql';
import { createYoga, processRegularResult, type YogaInitialContext } from 'graphql-yoga';
import { compiledExecute } from '../lib/compiled-execute.ts';
import { AppError, isErrorCode } from '../lib/errors.ts';
import type { RequestContext } from '../lib/request-context.ts';
import { type AppDeps, authenticateRequest } from './context.ts';
import { toGraphQLError } from './graphql-errors.ts';

/** What the context needs of a request: Yoga passes its Request, the direct path a stand-in. */
interface HeaderSource {
  headers: { get(name: string): string | null };
}

function createYogaServer(schema: GraphQLSchema, deps: AppDeps) {
  return createYoga<Record<string, unknown>, RequestContext>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    graphiql: {
      title: 'clinic-gateway GraphQL',
      defaultQuery: '{ patients(first: 5) { edges { node { id first_name last_name phone } } } }',
    },
    logging: false,
    plugins: [
      { onExecute: ({ setExecuteFn }: any) => setExecuteFn(compiledExecute) },
      {
        // Parse and validation errors skip masking; give them our code too.
        onResultProcess({ result, setResult }: { result: any; setResult: (r: any) => void }) {
          if (!result || Array.isArray(result) || !Array.isArray(result.errors)) return;
          if (result.errors.every((e: any) => isErrorCode(e?.extensions?.code))) return;
          setResult({ ...result, errors: result.errors.map((e: unknown) => toGraphQLError(e)) });
        },
      } as any,
    ],
    maskedErrors: { maskError: (error) => toGraphQLError(error) },
    context: async ({ request }: { request: HeaderSource } & Omit<YogaInitialContext, 'request'>) => {
      try {
        return await authenticateRequest(deps, request.headers.get('authorization'), false);
      } catch (e) {
        if (e instanceof AppError) throw toGraphQLError(e);
        throw e;
      }
    },
  });
}

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
  const yoga = createYogaServer(schema, deps);
  const stats = { direct: 0 };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!directEligible(req)) return yoga(req, res);
    const body = await readBody(req);
    if (body === null) return;
    const params = plainParams(body);
    if (!params) return replay(req, res, body);
    const request: HeaderSource = { headers: { get: (name) => headerOf(req, name) } };
    const enveloped = yoga.getEnveloped({ request, params } as any);
    let document: DocumentNode;
    try {
      document = enveloped.parse(params.query);
    } catch {
      return replay(req, res, body);
    }
    if (enveloped.validate(enveloped.schema, document).length > 0) return replay(req, res, body);
    const operation = getOperationAST(document, params.operationName);
    if (operation?.operation === 'subscription') return replay(req, res, body);

    stats.direct++;
    let result: ExecutionResult;
    try {
      const contextValue = await enveloped.contextFactory();
      result = (await enveloped.execute({
        schema: enveloped.schema,
        document,
        contextValue,
        variableValues: params.variables,
        operationName: params.operationName,
      })) as ExecutionResult;
    } catch (e) {
      // The context refused the request (unauthenticated, rate_limited): masked already.
      if (!(e instanceof GraphQLError)) throw e;
      result = { errors: [e] };
    }
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

interface PlainParams {
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
}

/** `{query, variables?, operationName?}` of the expected types, or null for Yoga to judge. */
function plainParams(body: Buffer): PlainParams | null {
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
