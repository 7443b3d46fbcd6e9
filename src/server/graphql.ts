import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ExecutionResult } from 'graphql';
import { processRegularResult } from 'graphql-yoga';
import { AppError, findAppError } from '../lib/errors.ts';
import { checkJsonText, utf8Text } from '../lib/json-text.ts';
import type { RequestContext, RequestInfo } from '../lib/request-context.ts';
import { readBody, sendResponse } from './body.ts';
import { serveConsole } from './graphiql.ts';
import { toGraphQLError } from './graphql-errors.ts';
import { introspectionWithoutKey } from './introspection.ts';
import type { OperationParams } from './pipeline-types.ts';
import type { OperationRunner } from './runner.ts';

export type GraphQLHandler = ((
  req: IncomingMessage,
  res: ServerResponse,
  scope: RequestInfo,
) => Promise<void>) & {
  /** Requests executed on the direct path (tests assert which path a request took). */
  stats: { direct: number };
};

/**
 * /graphql over Node's http. Yoga serves every request, with one shortcut: the everyday request
 * (POST, JSON body with a query, a JSON answer) runs through the operation runner
 * (src/server/runner.ts), which runs Yoga's own envelop pipeline (its parser and validation
 * caches, error masking, our compiled executor) without converting the
 * Node request into a WHATWG Request and the result into a Response, which cost more CPU than
 * executing a page of patients. Whatever the shortcut does not recognise before execution
 * (GET, batches, invalid JSON or documents, subscriptions, other media types)
 * is handed to Yoga whole, so the answers of both paths are Yoga's;
 * `test/graphql-direct.test.ts` compares them.
 *
 * Before anything is parsed, the request is authenticated (the console's page and assets,
 * src/server/graphiql.ts, and CORS pre-flights excepted) and its body is read up to
 * `maxBodyBytes`: a caller with an invalid key costs a key lookup, never a parse or a validation.
 * A caller without an Authorization header may introspect (src/server/introspection.ts): its
 * body, `application/json` only, is read up to 64 KiB and parsed within the token limit to see
 * whether it only does that, and the params it checked are all that runs (handed on re-serialised
 * as `application/json`); otherwise it gets the same 401, never a validation. The request's scope and deadline are the HTTP handler's
 * (src/server/app.ts, the runner's `begin`).
 */
export function createGraphQLHandler(runner: OperationRunner): GraphQLHandler {
  const { yoga, deps } = runner;
  const stats = { direct: 0 };
  const maxBody = deps.limits.maxBodyBytes;

  async function handle(req: IncomingMessage, res: ServerResponse, scope: RequestInfo): Promise<void> {
    // HEAD is GET without a body (node:http leaves the body out of a HEAD response).
    if (req.method === 'HEAD') req.method = 'GET';
    const page = serveConsole(req, res, (req.url ?? '/graphql').split('?')[0]);
    if (page) return page;
    if (!needsKey(req)) return yoga(req, res);
    let ctx: RequestContext;
    let read: Buffer | undefined;
    let anonymous = false;
    try {
      const credential = headerOf(req, 'authorization');
      if (credential === null) {
        // Introspection needs no key (src/server/introspection.ts); it reads the body to know.
        // What runs is what it checked: the body it hands back (JSON of the checked params), a
        // GET's URL rewritten to them.
        const checked = await introspectionWithoutKey(runner, req, scope);
        if (!checked) return;
        ({ ctx, body: read } = checked);
        anonymous = true;
      } else {
        ctx = await runner.authenticate(scope, credential, false);
        if (Number(req.headers['content-length']) > maxBody) throw tooLarge(maxBody);
      }
    } catch (e) {
      return refuse(req, res, e);
    }
    if (req.method !== 'POST') return yoga(req, res);
    const body = read ?? (await readBody(req, maxBody));
    if (body === null) return;
    if (body === 'too large') return refuse(req, res, tooLarge(maxBody));
    let json: unknown;
    try {
      const text = utf8Text(body);
      if (/json/i.test(req.headers['content-type'] ?? ''))
        // Depth and lone surrogates (named by the variable's path); a NUL in an argument is
        // refused by the argument's own check, which names it.
        checkJsonText(text, deps.limits.maxJsonDepth, { nul: false, under: 'variables' });
      json = jsonOf(req, text);
    } catch (e) {
      return refuse(req, res, e);
    }
    const params = directEligible(req) ? plainParams(json) : null;
    if (!params) return replay(req, res, body, anonymous);
    const operation = await runner.prepare(ctx, params);
    // Refused documents and subscriptions are answered by Yoga, as the rest of HTTP's requests.
    if (!('run' in operation) || operation.subscription) return replay(req, res, body, anonymous);
    stats.direct++;
    const result = (await operation.run()) as ExecutionResult;
    if (!result.errors?.length && !result.extensions) {
      const text = JSON.stringify(result);
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end(text);
      return;
    }
    // Errors decide the status and lose their internals as Yoga would have it.
    await sendResponse(res, processRegularResult(result as any, yoga.fetchAPI, 'application/json'));
  }

  /**
   * Answers a refused request as Yoga would (`{errors}`, the error's HTTP status), in the media
   * type the client asked for: Apollo Client reads a 401's errors only from
   * application/graphql-response+json. A body that cannot be read (not UTF-8, not JSON, nested
   * too deep) is a 400 whatever the Accept (docs/errors.md; graphql-http's audit SHOULD), where
   * Yoga would answer application/json with 200.
   */
  async function refuse(req: IncomingMessage, res: ServerResponse, e: unknown) {
    const unreadable = findAppError(e)?.code === 'invalid_request';
    const result = {
      errors: [toGraphQLError(e)],
      ...(unreadable ? { extensions: { http: { status: 400 } } } : {}),
    };
    await sendResponse(
      res,
      processRegularResult(result as any, yoga.fetchAPI, answerType(req.headers.accept)),
    );
  }

  /**
   * Hands a request whose body was read to Yoga. `checked`: the body is the JSON of the params
   * checked without a key (src/server/introspection.ts), and Yoga reads it as JSON, nothing else.
   */
  async function replay(req: IncomingMessage, res: ServerResponse, body: Buffer, checked = false) {
    const headers = new yoga.fetchAPI.Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    if (checked) {
      headers.set('content-type', 'application/json');
      for (const name of ['content-length', 'content-encoding', 'transfer-encoding']) headers.delete(name);
    }
    const url = `http://${req.headers.host ?? 'localhost'}${req.url ?? '/graphql'}`;
    await sendResponse(res, await yoga.fetch(url, { method: req.method, headers, body }));
  }

  return Object.assign(handle, { stats });
}

const tooLarge = (max: number) => new AppError('payload_too_large', `The request body exceeds ${max} bytes.`);

/**
 * Requests that can run an operation need a key (or to be introspection only): every POST, and
 * a GET with a query. CORS pre-flights do not.
 */
function needsKey(req: IncomingMessage): boolean {
  if (req.method === 'POST') return true;
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  const q = req.url?.indexOf('?') ?? -1;
  return q >= 0 && new URLSearchParams(req.url?.slice(q + 1)).has('query');
}

function headerOf(req: IncomingMessage, name: string): string | null {
  const v = req.headers[name.toLowerCase()];
  return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
}

/**
 * The body's JSON when its media type is one Yoga reads as JSON; undefined for another type
 * (Yoga judges it). Throws the 400 of a body that is not JSON.
 */
function jsonOf(req: IncomingMessage, text: string): unknown {
  const type = (req.headers['content-type'] ?? '').split(',')[0].split(';')[0].trim().toLowerCase();
  if (type !== 'application/json' && type !== 'application/graphql+json') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new AppError('invalid_request', 'The body is not valid JSON.');
  }
}

const GRAPHQL_RESPONSE = 'application/graphql-response+json';

/**
 * application/graphql-response+json when the Accept header prefers it to application/json: by
 * q-value (the most specific range naming a type gives its q: `application/json;q=0.1,
 * application/graphql-response+json` prefers ours), at equal q the one whose range comes first
 * (`application/graphql-response+json, application/json`, as GraphiQL and Apollo send it).
 * application/json otherwise, and when neither is acceptable.
 */
function answerType(accept: string | undefined): string {
  const ranges = (accept ?? '').split(',').flatMap((part, index) => {
    const [range, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    if (!range) return [];
    const q = params.find((p) => /^q\s*=/.test(p));
    const weight = q === undefined ? 1 : Number(q.slice(q.indexOf('=') + 1).trim());
    return [{ range, q: Number.isFinite(weight) ? Math.min(1, Math.max(0, weight)) : 0, index }];
  });
  // RFC 9110 12.5.1: an exact type before `application/*` before `*/*`.
  const preference = (type: string) => {
    for (const candidate of [type, 'application/*', '*/*']) {
      const named = ranges.filter((r) => r.range === candidate);
      if (named.length > 0)
        return named.reduce((best, r) => (r.q > best.q ? r : best), {
          q: -1,
          index: Number.POSITIVE_INFINITY,
        });
    }
    return { q: 0, index: Number.POSITIVE_INFINITY };
  };
  const ours = preference(GRAPHQL_RESPONSE);
  const plain = preference('application/json');
  const better = ours.q > plain.q || (ours.q === plain.q && ours.index < plain.index);
  return ours.q > 0 && better ? GRAPHQL_RESPONSE : 'application/json';
}

/** POST with a JSON body, answered as application/json. */
function directEligible(req: IncomingMessage): boolean {
  if (req.method !== 'POST' || !/^\/graphql(\?|$)/.test(req.url ?? '')) return false;
  const type = req.headers['content-type'];
  if (!type || !/^application\/json\s*(;\s*charset=utf-8\s*)?$/i.test(type)) return false;
  // A chunked body goes to Yoga (the tests send one to compare both paths).
  if (!(Number(req.headers['content-length']) > 0)) return false;
  const accept = req.headers.accept;
  return accept === undefined || /^\s*(\*\/\*|application\/json)\s*(;\s*charset=utf-8\s*)?$/i.test(accept);
}

/** `{query, variables?, operationName?}` of the expected types, or null for Yoga to judge. */
function plainParams(v: unknown): OperationParams | null {
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
