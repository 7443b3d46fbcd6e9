import { AsyncLocalStorage } from 'node:async_hooks';
import { randomFillSync } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import DataLoader from 'dataloader';
import type { Logger } from 'pino';
import type { ClinicMode } from './clinic-mode.ts';
import type { Clock } from './clock.ts';
import { logger } from './logger.ts';
import { cached } from './memo.ts';

/**
 * The one request context. The HTTP server creates it when a request arrives (request id, clock,
 * logger, a way to set response headers) and keeps it in AsyncLocalStorage for code deep in a
 * handler (error mapping, logs). Authentication completes the same object with who asks, an
 * EntityManager bound to their clinic and the request's DataLoaders. REST, GraphQL over
 * HTTP and graphql-ws all use it as their GraphQL context; services take the part they need.
 */
export interface Principal {
  keyId: string;
  clinicId: number;
  clinicKind: 'dental' | 'veterinary';
  /** Its clinic's mode (src/lib/clinic-mode.ts): what the request may reach outside the service. */
  clinicMode: ClinicMode;
  country: string;
  scopes: ReadonlySet<string>;
}

/** What every request has from its arrival. */
export interface RequestInfo {
  readonly requestId: string;
  readonly clock: Clock;
  /** The logger, its lines tagged with the request id. */
  readonly log: Logger;
  /** Sets a header of the response to come (rate-limit headers are known only after auth). */
  setHeader(name: string, value: string): void;
  /** The API key's id once known (request logs). */
  keyId?: string;
  /** The route table's pattern it matched, never its raw path (metrics: src/lib/metrics.ts). */
  route?: string;
  /** The GraphQL operation type it ran (query, mutation, subscription), once known. */
  operationType?: string;
  /** The peer address of the connection (failed authentications are throttled by it). */
  readonly clientAddress: string;
  /** Where clients reach the service (PUBLIC_URL, no trailing slash), when the deployment says: doc_url is absolute against it. */
  readonly publicUrl?: string;
  /** Set when the request's deadline passes or its client goes away: its work stops (budget.ts). */
  abortedBy?: Error;
  /** Its transport holds subscriptions open (graphql-ws); a plain HTTP request refuses them. */
  streaming?: boolean;
  /** Bytes read so far against the response cap (src/lib/budget.ts); absent: unbounded. */
  readBudget?: { bytes: number; max: number };
  /** A REST write's body as JSON, read and parsed as it came (GraphQL would coerce its values). */
  body?: unknown;
  /** A REST POST's Idempotency-Key header. */
  idempotencyKey?: string;
  /** A REST write's If-Match header (the ETag a GET answered). */
  ifMatch?: string;
  /** Writes this request has committed so far (src/services/unit-of-work.ts; idempotency.ts reads it). */
  committedWrites?: number;
  /** Its open database transactions, by connection (src/lib/write-deadline.ts). */
  transactions?: Map<object, OpenTransaction>;
  /** Set at its deadline: no transaction of it starts, and none not yet committing commits (write-deadline.ts). */
  writesStopped?: Error;
  /** Transactions it committed (a COMMIT that succeeded): the deadline then answers what they did. */
  commits?: number;
}

/** A transaction a request holds open (src/lib/write-deadline.ts). */
export interface OpenTransaction {
  /** Once its COMMIT is sent: whether it committed. */
  committing?: Promise<boolean>;
  /** The cancel of its running statement sent at the deadline: its ROLLBACK waits for it. */
  cancelled?: Promise<void>;
}

/**
 * What the service talks to besides its database (the messaging network, the media store),
 * one set per running app. Declared empty here and filled by the modules that use it (module
 * augmentation, e.g. src/services/chat/deps.ts), so lib names none of them.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by module augmentation.
export interface AppServices {}

/** An authenticated request: the GraphQL context of both schemas. */
export interface RequestContext extends RequestInfo {
  principal: Principal;
  /**
   * A fork for this request, its tenant filter bound to the principal's clinic: what writes and
   * entity reads use. Forked on first use (a read-only request mostly never needs one).
   */
  em: EntityManager;
  /** The clinic's read handle for the list mechanism (see `clinicReader`). */
  reader: EntityManager;
  /** The request's DataLoaders, by name (see `loader`). */
  loaders: Map<string, DataLoader<any, any>>;
  /** True under /v1: nested records come only from what the REST request asked to include. */
  rest: boolean;
  /** Spends points of the API key's rate-limit budget (throws `rate_limited` when spent). */
  spend(points: number): Promise<void>;
  /** Whether this request has spent from its budget yet. */
  hasSpent(): boolean;
  services: AppServices;
}

/** What a service call needs: who asks, a clinic-bound EntityManager, the time. CLI and seeds build one too. */
export type ServiceContext = Pick<RequestContext, 'em' | 'principal' | 'clock'> &
  Partial<Pick<RequestContext, 'reader'>>;

/** The EntityManager a service's lean reads go through: the clinic's read handle, else (CLI, seeds) its own. */
export const readsOf = (ctx: Pick<ServiceContext, 'em' | 'reader'>): EntityManager => ctx.reader ?? ctx.em;

const storage = new AsyncLocalStorage<RequestInfo>();

// Random bytes are drawn a few kilobytes at a time: one system call per request showed in profiles.
const ID_BYTES = 9;
const pool = Buffer.alloc(ID_BYTES * 512);
let offset = pool.length;

/** `req_` and 12 random base64url characters (72 bits). */
export function newRequestId(): string {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  offset += ID_BYTES;
  return `req_${pool.toString('base64url', offset - ID_BYTES, offset)}`;
}

/** A new request's context (not yet authenticated). */
export function newRequest(
  clock: Clock,
  setHeader: RequestInfo['setHeader'],
  opts: { clientAddress?: string; maxResponseBytes?: number; publicUrl?: string } = {},
): RequestInfo {
  const requestId = newRequestId();
  let log: Logger | undefined;
  return {
    requestId,
    clock,
    setHeader,
    clientAddress: opts.clientAddress ?? 'local',
    ...(opts.publicUrl ? { publicUrl: opts.publicUrl } : {}),
    ...(opts.maxResponseBytes ? { readBudget: { bytes: 0, max: opts.maxResponseBytes } } : {}),
    // A child logger costs an allocation: made only when the request logs something.
    get log() {
      log ??= logger.child({ request_id: requestId });
      return log;
    },
  };
}

/** Runs `fn` with the request context in scope. */
export function runRequest<T>(info: RequestInfo, fn: () => T): T {
  return storage.run(info, fn);
}

export const currentRequest = (): RequestInfo | undefined => storage.getStore();

const writeTime = new AsyncLocalStorage<Date>();

/**
 * The current write's time (`atWriteTime`), else the current request's (its injected clock), else
 * the system's: the timestamps of the rows a write changes are the instant its events carry.
 */
export const clockNow = (): Date => writeTime.getStore() ?? storage.getStore()?.clock.now() ?? new Date();

/** Runs a write with its time fixed: `clockNow()` answers `now` inside it. */
export const atWriteTime = <T>(now: Date, fn: () => T): T => writeTime.run(now, fn);

/**
 * The current request's time in ms, read from its clock once per request: presenting a page asks
 * for it for every row, and a request happens at one instant (a worker's system scope defines
 * `timeMs` to read its clock each time: src/server/runner.ts, runSystem).
 */
export function requestTimeMs(): number {
  const info = storage.getStore() as (RequestInfo & { timeMs?: number }) | undefined;
  if (!info) return Date.now();
  info.timeMs ??= info.clock.now().getTime();
  return info.timeMs;
}

export const currentRequestId = (): string => storage.getStore()?.requestId ?? 'req_unknown';

/** The current request's logger, or the process's outside a request. */
export const requestLogger = (): Logger => storage.getStore()?.log ?? logger;

/** A clinic-bound fork of the root EntityManager: the tenant filter scopes every query to the clinic. */
export function scopedEm(root: EntityManager, clinicId: number): EntityManager {
  const em = root.fork({ clear: true });
  em.setFilterParams('tenant', { clinicId });
  return em;
}

const readers = new WeakMap<EntityManager, Map<number, EntityManager>>();
// A bound, not a cache policy: past it the handles are made again (one fork each).
const MAX_READERS = 1000;

/**
 * A clinic's read handle: one clinic-bound fork shared by that clinic's requests, for the list
 * mechanism's lean reads only (src/db/lean.ts), which return plain rows and never put an entity
 * in its identity map. A fork per request cost each read-only request a unit of work it never
 * used (about 2% of a chat page's CPU). Anything that loads entities uses the request's own
 * `em`; test/chat.test.ts and test/isolation.test.ts check that the shared handles stay empty.
 */
export function clinicReader(root: EntityManager, clinicId: number): EntityManager {
  const byClinic = cached(readers, root, () => new Map<number, EntityManager>());
  if (byClinic.size >= MAX_READERS && !byClinic.has(clinicId)) byClinic.clear();
  return cached(byClinic, clinicId, () => scopedEm(root, clinicId));
}

/** The read handles made so far (tests: they must hold no entities). */
export const clinicReaders = (root: EntityManager): EntityManager[] => [
  ...(readers.get(root)?.values() ?? []),
];

/** A request's EntityManager, forked on first use. */
interface LazyEm {
  root: EntityManager;
  clinicId: number;
  em?: EntityManager;
}

const lazyEm = Symbol('lazyEm');

/**
 * Gives `target` the `em` of `lazy`: a getter that forks on first use, shared by every object
 * given the same `lazy` (the request context and GraphQL's own context object). Not enumerable:
 * GraphQL's pipeline copies the request context's enumerable properties into its context
 * (envelop's Object.assign), which would read, and so fork, it every time.
 *
 * One getter function for all, reading its state from the object: a getter closing over a
 * request's objects, defined per object, is reachable from V8's old generation (its hidden
 * class) and kept every request's objects alive through young-generation collections until the
 * next full one (measured on GraphQL requests: about 3.5 MB surviving each scavenge).
 */
function lendEm(target: object, lazy: LazyEm): void {
  Object.defineProperty(target, lazyEm, { value: lazy, enumerable: false, configurable: true });
  Object.defineProperty(target, 'em', { get: lazyEmGetter, enumerable: false, configurable: true });
}

function lazyEmGetter(this: { [lazyEm]: LazyEm }): EntityManager {
  const lazy = this[lazyEm];
  lazy.em ??= scopedEm(lazy.root, lazy.clinicId);
  return lazy.em;
}

/** Gives GraphQL's context object the request context's `em` (the same fork, made on first use). */
export function shareEm(target: object, ctx: RequestContext): void {
  lendEm(target, (ctx as unknown as { [lazyEm]: LazyEm })[lazyEm]);
}

/** Completes the request context once the key is known (the same object, now authenticated). */
export function authenticated(
  info: RequestInfo,
  principal: Principal,
  root: EntityManager,
  rest: boolean,
  spend: RequestContext['spend'] = async () => {},
  hasSpent: RequestContext['hasSpent'] = () => true,
  services: AppServices = {} as AppServices,
): RequestContext {
  const ctx = info as RequestContext;
  ctx.keyId = principal.keyId;
  ctx.principal = principal;
  lendEm(ctx, { root, clinicId: principal.clinicId });
  ctx.reader = clinicReader(root, principal.clinicId);
  ctx.loaders = new Map();
  ctx.rest = rest;
  ctx.spend = spend;
  ctx.hasSpent = hasSpent;
  ctx.services = services;
  return ctx;
}

/** The request's DataLoader named `name`, made with `batch` on first use. */
export function loader<K, V>(
  ctx: Pick<RequestContext, 'loaders'>,
  name: string,
  batch: (keys: readonly K[]) => Promise<(V | Error)[]>,
): DataLoader<K, V> {
  let l = ctx.loaders.get(name);
  if (!l) {
    l = new DataLoader(batch);
    ctx.loaders.set(name, l);
  }
  return l as DataLoader<K, V>;
}
