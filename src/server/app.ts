import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MikroORM } from '@mikro-orm/postgresql';
import type pg from 'pg';
import { createRateLimiter } from '../auth/rate-limit.ts';
import { entityNamed } from '../entities/index.ts';
import { clientAddressOf, parseTrustProxy } from '../lib/client-address.ts';
import type { Clock } from '../lib/clock.ts';
import { ERROR_REFERENCE_PATH } from '../lib/error-docs.ts';
import { AppError, findAppError, toAppError } from '../lib/errors.ts';
import { parseJsonBody, utf8Text } from '../lib/json-text.ts';
import type { Limits } from '../lib/limits.ts';
import { logger } from '../lib/logger.ts';
import { httpRequestDuration } from '../lib/metrics.ts';
import { currentRequest, type RequestContext, type RequestInfo, runRequest } from '../lib/request-context.ts';
import { CALLBACK_PATH } from '../network/adapter.ts';
import { createDirectRest } from '../rest/direct.ts';
import { serveDocs } from '../rest/docs.ts';
import { errorBody, errorHeaders } from '../rest/errors.ts';
import { openApiDocument } from '../rest/openapi.ts';
import { checkQueryParams } from '../rest/params.ts';
import { suggestionFor } from '../rest/route-suggestion.ts';
import { matchRoute } from '../rest/routes.ts';
import { createOpenApiSource } from '../rest/sofa.ts';
import { schemas } from '../schema/index.ts';
import type { ChatNetworks } from '../services/chat/networks.ts';
import { EventHub } from '../services/events/hub.ts';
import { checkResources, type Row } from '../services/resource.ts';
import { etagOf } from '../services/writes.ts';
import { readBody } from './body.ts';
import { callDeps } from './call-deps.ts';
import { chatDeps, type MediaOptions } from './chat-deps.ts';
import { settleRateLimit } from './context.ts';
import { corsPolicy } from './cors.ts';
import { createDocPages } from './doc-pages.ts';
import { createErrorReference } from './error-reference.ts';
import { createGraphQLHandler } from './graphql.ts';
import { createGraphQLPipeline } from './graphql-pipeline.ts';
import { serveInbox } from './inbox/page.ts';
import { createLanding } from './landing-page.ts';
import { serveMedia } from './media-route.ts';
import { createMetricsRoute, methodLabel, routeLabel } from './metrics-route.ts';
import { handleNetworkCallback } from './network-callback.ts';
import { createOperationRunner } from './runner.ts';
import { servePortal } from './webhook-portal/page.ts';

export interface AppOptions {
  orm: MikroORM;
  clock: Clock;
  keyCacheTtlMs: number;
  limits: Limits;
  /** The database's pool, where the rate limits are kept (null: in this process only). */
  rateLimitPool: pg.Pool | null;
  /** Origins browsers may call from; empty: any origin, never with credentials (cors.ts). */
  corsOrigins: readonly string[];
  /** The messaging network of each clinic mode (src/server/start.ts): the sandbox for test clinics. */
  networks: ChatNetworks;
  /** The network's secret: the HMAC key of its callbacks to /hooks/network. */
  networkSecret: string;
  /** The media store and its signed links (src/media). */
  media: MediaOptions;
  /** TRUST_PROXY: which peers' X-Forwarded-For names the client (src/lib/client-address.ts); none by default. */
  trustProxy?: string;
  /** METRICS_TOKEN: GET /metrics answers a scraper that sends it (docs/metrics.md); absent, /metrics is a 404. */
  metricsToken?: string;
  /** Where /errors reads docs/errors.md (the checkout's unless a test names another). */
  errorReferenceSource?: URL;
  /** Where /docs/<name> reads docs/<name>.md (the checkout's docs/ unless a test names another). */
  docsSource?: URL;
  /** PUBLIC_URL: where clients reach the service (doc_url is absolute against it, the landing page's calls use it). */
  publicUrl?: string;
}

const READY_TIMEOUT_MS = 2000;

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(text);
}

/** The one HTTP handler: /health, /graphql (yoga), /v1 (the route table), /v1/openapi.json and /v1/docs. */
export function createApp(opts: AppOptions) {
  const { publicSchema, restSchema } = schemas();
  // A definition that names a column or relation its entity lacks stops the service here.
  checkResources((name) => {
    try {
      return opts.orm.em.getMetadata(entityNamed(name)) as any;
    } catch {
      return undefined;
    }
  });
  const deps = {
    em: opts.orm.em,
    clock: opts.clock,
    keyCacheTtlMs: opts.keyCacheTtlMs,
    rateLimiter: createRateLimiter(opts.rateLimitPool, opts.limits),
    limits: opts.limits,
    services: {
      chat: chatDeps(opts.networks, opts.media, opts.limits, opts.clock),
      calls: callDeps(opts.media, opts.limits, opts.clock),
      writes: { idempotencyLeaseMs: opts.limits.requestDeadlineMs + 60_000 },
      events: { hub: new EventHub() },
    },
    ...(opts.publicUrl ? { publicUrl: opts.publicUrl.replace(/\/+$/, '') } : {}),
  };
  // Every transport's operations go through the one runner (src/server/runner.ts).
  const runner = createOperationRunner(createGraphQLPipeline(publicSchema, deps), deps);
  const graphql = createGraphQLHandler(runner);
  // SOFA documents the routes (the OpenAPI document); rest/direct.ts turns a request into its operation.
  const documented = createOpenApiSource(restSchema);
  const routeOperation = createDirectRest(restSchema);
  const openapi = JSON.stringify(openApiDocument(documented));
  const cors = corsPolicy(opts.corsOrigins);
  const trustProxy = parseTrustProxy(opts.trustProxy ?? '');
  const docPages = createDocPages(opts.docsSource);
  const serveErrorReference = createErrorReference(opts.errorReferenceSource, docPages.served);
  const serveLanding = createLanding({
    documents: docPages.documents,
    trustProxy,
    ...(deps.publicUrl ? { publicUrl: deps.publicUrl } : {}),
  });
  const metrics = opts.metricsToken
    ? createMetricsRoute({
        token: opts.metricsToken,
        em: opts.orm.em,
        clock: opts.clock,
        rateLimiter: deps.rateLimiter,
      })
    : null;

  function dispatch(req: IncomingMessage, res: ServerResponse, scope: RequestInfo) {
    const { requestId } = scope;
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    if (path === '/health') return sendJson(res, 200, { status: 'ok' });
    if (path === '/ready') return ready(res);
    // The service's own pages (src/server/page-layout.ts): what a browser opening the address sees.
    if (req.method === 'GET' || req.method === 'HEAD') {
      if (path === '/') return serveLanding(req, res);
      if (path === ERROR_REFERENCE_PATH) return serveErrorReference(req, res);
      if (path === '/docs' || path.startsWith('/docs/')) return docPages.serve(req, res, path);
    }
    if (path === '/metrics' && metrics) return metrics(req, res, scope);
    if (path === '/graphql' || path.startsWith('/graphql/')) return graphql(req, res, scope);
    const page = serveInbox(req, res, path) ?? servePortal(req, res, path);
    if (page) return page;
    if (path === CALLBACK_PATH)
      return handleNetworkCallback(req, res, {
        em: opts.orm.em,
        secret: opts.networkSecret,
        limits: opts.limits,
        clock: opts.clock,
        copyMedia: deps.services.chat.media?.copy,
      });
    if (path.startsWith('/media/'))
      return serveMedia(req, res, { secret: opts.media.secret, store: opts.media.store, clock: opts.clock });
    if (path === '/v1/openapi.json') {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      return res.end(openapi);
    }
    if ((path === '/v1/docs' || path.startsWith('/v1/docs/')) && serveDocs(path, res)) return;
    if (path === '/v1' || path.startsWith('/v1/')) {
      // Only the route table is reachable: unknown paths (routes SOFA would add included)
      // are a JSON 404, a known path with another method a 405.
      // HEAD is GET without a body (node:http leaves the body out for a HEAD request).
      const head = req.method === 'HEAD';
      const m = matchRoute(head ? 'GET' : (req.method ?? 'GET'), path.slice(3));
      if (!m.route) {
        const err = m.allowed.length
          ? new AppError(
              'method_not_allowed',
              `${req.method} is not allowed on ${path}; use ${m.allowed.join(', ')}.`,
            )
          : new AppError('not_found', `No route ${req.method} ${path}.${suggestionFor(path.slice(3))}`);
        return sendJson(
          res,
          err.status,
          errorBody(err, requestId),
          m.allowed.length ? { allow: m.allowed.join(', ') } : {},
        );
      }
      if (head) req.method = 'GET';
      const { route } = m;
      scope.route = `/v1${route.path}`;
      return authenticateThen(req, res, scope, async (ctx) => {
        // After authentication (a 401 comes first), before anything else is read.
        const search = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
        checkQueryParams(restSchema, route, search);
        if (route.method !== 'GET') await readWriteBody(req);
        const body = await runner.runRoute(ctx, routeOperation(route, path.slice(3), search));
        // A single object carries its version: the ETag a write's If-Match names.
        const etag = etagOf((body as { data?: Row } | null)?.data);
        if (!res.headersSent) sendJson(res, route.status, body, etag ? { etag } : {});
      });
    }
    // A path of the table without its /v1 (or with a typo) is named as it should be.
    const err = new AppError(
      'not_found',
      `No route ${req.method} ${path}. The API lives under /v1 and /graphql.${suggestionFor(path)}`,
    );
    return sendJson(res, 404, errorBody(err, requestId));
  }

  /**
   * /ready: the database answers within READY_TIMEOUT_MS and every migration is applied.
   * /health only says the process is alive (a balancer restarts on that, routes on this).
   */
  async function ready(res: ServerResponse) {
    let timer: NodeJS.Timeout | undefined;
    try {
      const pending = await Promise.race([
        opts.orm.migrator.getPending(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('timed out')), READY_TIMEOUT_MS);
        }),
      ]);
      if (pending.length) {
        return sendJson(
          res,
          503,
          { status: 'unavailable', reason: 'migrations pending' },
          { 'retry-after': '5' },
        );
      }
      return sendJson(res, 200, { status: 'ready' });
    } catch {
      return sendJson(
        res,
        503,
        { status: 'unavailable', reason: 'database unreachable' },
        { 'retry-after': '5' },
      );
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * A write's body is read here, up to the body limit, and kept as JSON on the request context
   * with its Idempotency-Key and If-Match headers: the services check it against the write's
   * input definition (no GraphQL coercion turns `"yes"` into false or drops a null).
   */
  async function readWriteBody(req: IncomingMessage): Promise<void> {
    const raw = await readBody(req, opts.limits.maxBodyBytes);
    if (raw === null) throw new AppError('invalid_request', 'The request body did not arrive.');
    if (raw === 'too large')
      throw new AppError('payload_too_large', `The body is larger than ${opts.limits.maxBodyBytes} bytes.`);
    const body = parseJsonBody(utf8Text(raw), opts.limits.maxJsonDepth);
    const scope = currentRequest();
    if (!scope) return;
    scope.body = body;
    const key = req.headers['idempotency-key'];
    if (key !== undefined) scope.idempotencyKey = Array.isArray(key) ? key.join(',') : key;
    const ifMatch = req.headers['if-match'];
    if (ifMatch !== undefined) scope.ifMatch = ifMatch;
  }

  /**
   * Authenticates (and counts the rate limit) before the parameters are read, so a request
   * without a valid key is a 401 whatever else is wrong with it.
   */
  async function authenticateThen(
    req: IncomingMessage,
    res: ServerResponse,
    scope: RequestInfo,
    next: (ctx: RequestContext) => unknown,
  ) {
    const { requestId } = scope;
    try {
      return await next(await runner.authenticate(scope, req.headers.authorization ?? null, true));
    } catch (e) {
      let err = findAppError(e);
      if (!err) throw e;
      // Refused before its operation ran (an unknown, empty or repeated parameter): it still counts.
      if (err.code !== 'unauthenticated' && err.code !== 'rate_limited') {
        await settleRateLimit().catch((limited) => {
          err = findAppError(limited) ?? err;
        });
      }
      return sendJson(res, err.status, errorBody(err, requestId), errorHeaders(err));
    }
  }

  function handler(req: IncomingMessage, res: ServerResponse) {
    const started = performance.now();
    const scope = runner.begin({
      clientAddress: clientAddressOf(req, trustProxy),
      setHeader: (name, value) => res.headersSent || res.setHeader(name, value),
      maxResponseBytes: opts.limits.responseMaxBytes,
    });
    const { requestId } = scope;
    // The deadline and a client that goes away both abort the request's work (src/lib/budget.ts).
    // Armed at arrival: reading the body counts too.
    const deadline = runner.armDeadline(scope, opts.limits.requestDeadlineMs, (err) => {
      // Armed before the request's context is entered: its answer is written inside it (doc_url).
      if (!res.headersSent) runRequest(scope, () => sendJson(res, err.status, errorBody(err, requestId)));
    });
    res.on('close', () => {
      clearTimeout(deadline);
      if (!res.writableFinished)
        scope.abortedBy ??= new AppError('deadline_exceeded', 'The client went away.');
    });
    res.setHeader('x-request-id', requestId);
    if (cors.apply(req, res)) return;
    // Responses carry clinical data: never stored by a cache, never content-sniffed.
    res.setHeader('cache-control', 'no-store');
    res.setHeader('x-content-type-options', 'nosniff');
    res.on('finish', () => {
      const ms = performance.now() - started;
      httpRequestDuration.observe(
        {
          route: routeLabel(scope.route, req.url),
          operation: scope.operationType ?? '',
          method: methodLabel(req.method),
          status: res.statusCode,
        },
        ms / 1000,
      );
      logger.info(
        {
          request_id: requestId,
          key_id: scope.keyId,
          method: req.method,
          // A media link's token is a credential for ten hours: it stays out of the logs.
          route: req.url?.startsWith('/media/') ? '/media/:token' : req.url?.split('?')[0],
          status: res.statusCode,
          duration_ms: Math.round(ms * 10) / 10,
        },
        'request',
      );
    });
    runRequest(scope, () => {
      Promise.resolve(dispatch(req, res, scope)).catch((e) => {
        // A request answered already (its deadline's 504) failing to write again is expected.
        if (scope.abortedBy && res.headersSent) return;
        const err = toAppError(e);
        if (!res.headersSent) sendJson(res, err.status, errorBody(err, requestId), errorHeaders(err));
      });
    });
  }

  return {
    handler,
    graphql,
    publicSchema,
    restSchema,
    openapi: () => JSON.parse(openapi),
    /** The one operation runner (src/server/runner.ts): graphql-ws runs its operations with it too. */
    runner,
    /** What the runner and the services are given (the database, the clock, the limits, the network). */
    deps,
    /** This process's subscribers of committed events (fed by src/services/events/relay.ts). */
    eventHub: deps.services.events.hub,
  };
}
