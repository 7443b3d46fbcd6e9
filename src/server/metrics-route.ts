import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EntityManager } from '@mikro-orm/postgresql';
import type pg from 'pg';
import { Gauge, Registry } from 'prom-client';
import type { RateLimiter } from '../auth/rate-limit.ts';
import type { Clock } from '../lib/clock.ts';
import { ERROR_REFERENCE_PATH } from '../lib/error-docs.ts';
import { AppError, findAppError } from '../lib/errors.ts';
import { LIVE_JOB_DATA, QUEUE_DEPTHS, QUEUE_STATES } from '../lib/job-queue.ts';
import { logger } from '../lib/logger.ts';
import { registry } from '../lib/metrics.ts';
import type { RequestInfo } from '../lib/request-context.ts';
import { CALLBACK_PATH } from '../network/adapter.ts';
import { errorBody } from '../rest/errors.ts';
import { restRoutes } from '../rest/routes.ts';
import { DELIVERY_QUEUE } from '../services/webhooks/delivery-jobs.ts';
import { CONSOLE_ASSETS } from './graphiql.ts';
import { INBOX_ASSETS, INBOX_PATH } from './inbox/page.ts';
import { PORTAL_ASSETS, PORTAL_PATH } from './webhook-portal/page.ts';

/**
 * `GET /metrics` (docs/metrics.md): the process's registry (src/lib/metrics.ts) and what is read
 * from the database at scrape time, in Prometheus's text format. Served only when METRICS_TOKEN
 * is set (otherwise the path is the 404 any unknown path is), and only to a request that names
 * that token as its Bearer credential: the figures describe every clinic at once, so no API key
 * reads them.
 */
export interface MetricsOptions {
  /** METRICS_TOKEN: the Bearer token a scraper sends. */
  token: string;
  em: EntityManager;
  clock: Clock;
  /** The API's limiter: a wrong token is a failed authentication like a wrong key (src/auth/rate-limit.ts). */
  rateLimiter: RateLimiter;
  /** Jobs counted per queue and state at most (MAX_COUNTED_JOBS; tests lower it). */
  maxCountedJobs?: number;
  /** Queued delivery attempts read for the outbox lag at most (MAX_LAG_JOBS; tests lower it). */
  maxLagJobs?: number;
}

/**
 * Live jobs counted per queue and state at most, each pair with its own cap: a larger backlog
 * shows as this floor (its size is the news), and one queue's backlog never hides another's.
 */
export const MAX_COUNTED_JOBS = 100_000;
/** Queued attempts read per scrape for the outbox lag at most, oldest first. */
export const MAX_LAG_JOBS = 10_000;

const digest = (s: string) => createHash('sha256').update(s).digest();

export function createMetricsRoute(opts: MetricsOptions) {
  const expected = digest(`Bearer ${opts.token}`);
  const own = new Registry();
  const sql = <T>(text: string, params: unknown[] = []) => opts.em.getConnection().execute<T[]>(text, params);
  // A gauge read at scrape time; a failing read (the database away) leaves it out of this scrape.
  const scraped = (name: string, help: string, labelNames: string[], read: (g: Gauge) => Promise<void>) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers: [own],
      async collect() {
        this.reset();
        await read(this).catch((err) => logger.warn({ err, metric: name }, 'metric not read'));
      },
    });

  // The pool as it was when the scrape arrived: the scrape's own queries below would otherwise
  // show as waiting (pg-pool queues a request for a connection until its next tick, idle ones too).
  let pool = { total: 0, idle: 0, waiting: 0 };
  const readPool = async () => {
    const p = (await opts.em.getConnection().getNativeClient()) as pg.Pool;
    pool = { total: p.totalCount, idle: p.idleCount, waiting: p.waitingCount };
  };
  scraped(
    'db_pool_connections',
    "The service's database pool: connections in use and idle.",
    ['state'],
    async (g) => {
      g.set({ state: 'in_use' }, pool.total - pool.idle);
      g.set({ state: 'idle' }, pool.idle);
    },
  );
  scraped(
    'db_pool_waiting',
    "Queries waiting for a connection of the service's database pool.",
    [],
    async (g) => {
      g.set(pool.waiting);
    },
  );
  // Live jobs only, each (queue, state) counted apart under its own cap: a capped count over all
  // queues at once would split the floor between them at random (a webhook backlog would hide the
  // chat sends). Every declared queue shows, at 0 when it has none. Each count is one range of
  // pg-boss's index of live jobs (job_i14: name, state); a state given as a parameter instead of
  // a literal made PostgreSQL scan the table (EXPLAIN on 200,000 seeded jobs: 950 ms against 40).
  const maxCounted = opts.maxCountedJobs ?? MAX_COUNTED_JOBS;
  scraped(
    'job_queue_depth',
    'Jobs waiting, waiting to retry or under way, by queue.',
    ['queue', 'state'],
    async (g) => {
      const rows = await sql<Record<(typeof QUEUE_STATES)[number], string> & { name: string }>(
        QUEUE_DEPTHS,
        QUEUE_STATES.map(() => maxCounted),
      );
      for (const r of rows)
        for (const state of QUEUE_STATES) g.set({ queue: r.name, state }, Number(r[state]));
    },
  );
  // An event is waiting while an attempt to deliver it to an enabled subscription is queued: the
  // oldest such event's age, on the service's clock (the one events are stamped with); 0 when none.
  // The attempts are read oldest first (a job is created with its event, and a retry keeps its
  // created_on), so past the cap the figure is still the age of the oldest events, not of
  // whichever rows came first: waiting ones through pg-boss's index (name, priority desc,
  // created_on) of waiting jobs (job_i11; deliveries have one priority), under way ones apart.
  const maxLag = opts.maxLagJobs ?? MAX_LAG_JOBS;
  scraped(
    'outbox_lag_seconds',
    'Age of the oldest event with a delivery still queued for an enabled subscription (0: none).',
    [],
    async (g) => {
      const [row] = await sql<{ oldest: string | Date | null }>(
        `select min("e"."created_at") as "oldest" from (${LIVE_JOB_DATA}) as "j"
         join "webhook_subscription" as "s" on "s"."id" = ("j"."data"->>'subscription')::int
           and "s"."enabled" and "s"."deleted_at" is null
         join "event" as "e" on "e"."id" = ("j"."data"->>'event')::int`,
        [DELIVERY_QUEUE, maxLag, DELIVERY_QUEUE, maxLag],
      );
      const oldest = row?.oldest == null ? null : new Date(row.oldest).getTime();
      g.set(oldest == null ? 0 : Math.max(0, (opts.clock.now().getTime() - oldest) / 1000));
    },
  );

  return async function serveMetrics(
    req: IncomingMessage,
    res: ServerResponse,
    scope: Pick<RequestInfo, 'requestId' | 'clientAddress' | 'setHeader'>,
  ) {
    const { requestId } = scope;
    const given = req.headers.authorization;
    if (!given || !timingSafeEqual(digest(given), expected)) {
      let err = new AppError('unauthenticated', 'GET /metrics takes the METRICS_TOKEN as a Bearer token.');
      // Throttled as a wrong API key is (src/server/context.ts): the token is guessed at the same
      // rate, from the same addresses; past the budget the answer is the 429, counted no further.
      try {
        await opts.rateLimiter.checkAddress(scope.clientAddress, scope.setHeader);
        await opts.rateLimiter.authFailed(scope.clientAddress);
      } catch (e) {
        err = findAppError(e) ?? err;
        if (err.code !== 'rate_limited') throw e;
      }
      res.writeHead(err.status, {
        'content-type': 'application/json; charset=utf-8',
        ...(err.code === 'unauthenticated' ? { 'www-authenticate': 'Bearer realm="metrics"' } : {}),
      });
      res.end(JSON.stringify(errorBody(err, requestId)));
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      const err = new AppError('method_not_allowed', `${req.method} is not allowed on /metrics; use GET.`);
      res.writeHead(err.status, { 'content-type': 'application/json; charset=utf-8', allow: 'GET, HEAD' });
      res.end(JSON.stringify(errorBody(err, requestId)));
      return;
    }
    await readPool();
    const [process, scrapedNow] = await Promise.all([registry.metrics(), own.metrics()]);
    res.writeHead(200, { 'content-type': registry.contentType });
    res.end(req.method === 'HEAD' ? undefined : `${process}\n${scrapedNow}`);
  };
}

/**
 * The methods some route answers: the route table's, GET and HEAD of the pages, POST of /graphql,
 * OPTIONS of a CORS pre-flight. Node's parser accepts 34 methods (PROPFIND, MKCALENDAR, …): each
 * would be a series of its own for the life of the process.
 */
const ANSWERED_METHODS: ReadonlySet<string> = new Set([
  'GET',
  'HEAD',
  'POST',
  'OPTIONS',
  ...restRoutes.map((r) => r.method),
]);

/** A request's method label: a method some route answers, or `other`. */
export function methodLabel(method: string | undefined): string {
  return method !== undefined && ANSWERED_METHODS.has(method) ? method : 'other';
}

/** Paths served as they are (no parameter in them): their own route label. */
const FIXED_PATHS = new Set([
  '/',
  '/health',
  '/ready',
  '/metrics',
  ERROR_REFERENCE_PATH,
  '/docs',
  '/graphql',
  INBOX_PATH,
  `${INBOX_PATH}/`,
  PORTAL_PATH,
  `${PORTAL_PATH}/`,
  '/v1/openapi.json',
  '/v1/docs',
  CALLBACK_PATH,
]);

/**
 * A request's route label: the pattern it matched (a REST route sets it: src/server/app.ts), a
 * fixed path, a family of paths with a parameter in them, or `other` (a 404): never the raw path,
 * so a client sending random paths makes no new series.
 */
export function routeLabel(matched: string | undefined, url: string | undefined): string {
  if (matched) return matched;
  const raw = url ?? '/';
  const q = raw.indexOf('?');
  const path = q < 0 ? raw : raw.slice(0, q);
  if (FIXED_PATHS.has(path)) return path;
  // The pages' hashed files: one label per page (their names change with every version).
  if (path.startsWith(CONSOLE_ASSETS)) return `${CONSOLE_ASSETS}:file`;
  if (path.startsWith(INBOX_ASSETS)) return `${INBOX_ASSETS}:file`;
  if (path.startsWith(PORTAL_ASSETS)) return `${PORTAL_ASSETS}:file`;
  if (path.startsWith('/graphql/')) return '/graphql';
  if (path.startsWith('/media/')) return '/media/:token';
  if (path.startsWith('/v1/docs/')) return '/v1/docs';
  // The documents of docs/ (src/server/doc-pages.ts): one label for all, their names a closed set.
  if (path.startsWith('/docs/')) return '/docs/:name';
  return 'other';
}
