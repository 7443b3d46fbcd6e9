import { randomBytes } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import { afterAll, inject } from 'vitest';
import { createApiKey } from '../src/auth/keys.ts';
import { openOrm } from '../src/db/orm.ts';
import type { ClinicMode } from '../src/lib/clinic-mode.ts';
import { FixedClock } from '../src/lib/clock.ts';
import { defaultLimits, type Limits } from '../src/lib/limits.ts';
import { camelOf } from '../src/lib/names.ts';
import type { MessagingNetwork } from '../src/network/adapter.ts';
import { type RunningServer, startHttpServer } from '../src/server/start.ts';
import { createClinic } from '../src/services/clinics/clinics.ts';
import { type Shape, shapeOf } from '../src/services/resource.ts';
import type { TcpProxy } from './tcp-proxy.ts';

/** A database of this test file's own, cloned from the migrated template; dropped afterwards. */
export async function testDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const admin = inject('adminUrl');
  const name = `cg_t_${inject('runId')}_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`create database "${name}" template "${inject('templateDb')}"`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(`drop database if exists "${name}" with (force)`);
      await c.end();
    },
  };
}

export interface TestApp {
  orm: MikroORM;
  server: RunningServer;
  url: string;
  clock: FixedClock;
  queries: string[];
  /** Creates a clinic and a key with the given scopes; returns ids and the bearer key. */
  clinicWithKey(
    kind: 'dental' | 'veterinary',
    scopes: string[],
    name?: string,
    /**
     * The clinic's IANA time zone (default UTC), and its mode: test by default, as the demo's
     * clinics (their media servers and webhook receivers are plain http on loopback).
     */
    opts?: { timezone?: string; mode?: ClinicMode },
  ): Promise<{ clinicId: number; key: string }>;
  key(clinicId: number, scopes: string[]): Promise<string>;
  /** POSTs JSON (a string is sent as it is) to a path of the server. */
  post(
    path: string,
    body: unknown,
    key: string | null,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: any; headers: Headers }>;
  /** Any method (PATCH, DELETE, POST) with a JSON body (none when undefined). */
  send(
    method: string,
    path: string,
    body: unknown,
    key: string | null,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: any; headers: Headers }>;
  get(path: string, key?: string | null): Promise<{ status: number; body: any; headers: Headers }>;
  gql(
    query: string,
    variables?: Record<string, unknown>,
    key?: string | null,
  ): Promise<{ status: number; body: any; headers: Headers }>;
  /**
   * Waits until every chat send queued so far has been handed to the network (or failed) and
   * the sandbox's receipts for them have been posted: what a send's request no longer waits for.
   */
  settle(): Promise<void>;
}

/** A real app over real HTTP on a loopback port, on a fresh database. Closed after the file. */
export async function startTestApp(
  opts: {
    limits?: Partial<Limits>;
    keyCacheTtlMs?: number;
    /** The app reaches its database through this proxy (test/tcp-proxy.ts). */
    proxy?: (target: { host: string; port: number }) => Promise<TcpProxy>;
    corsOrigins?: string[];
    /** The sandbox network's receipt delays (ms). */
    sandboxDelays?: { sent: number; delivered: number; read: number };
    /** TRUST_PROXY (src/lib/client-address.ts). */
    trustProxy?: string;
    /** Whether the server runs the queue's workers (the default, as `npm start`). */
    workers?: boolean;
    /** false: ROLES without deliveries (webhook deliveries left to `npm run worker`). */
    deliveryWorkers?: boolean;
    /** METRICS_TOKEN: GET /metrics served to it (docs/metrics.md). */
    metricsToken?: string;
    /** Where /errors reads docs/errors.md (src/server/error-reference.ts). */
    errorReferenceSource?: URL;
    /** The network live clinics send through (docs/test-mode.md); absent, their sends are a 503. */
    liveNetwork?: MessagingNetwork;
    /** PUBLIC_URL: where clients reach the service (media links, doc_url, the landing page's calls). */
    publicUrl?: string;
  } = {},
): Promise<TestApp & { proxy?: TcpProxy; databaseUrl: string }> {
  const db = await testDatabase();
  const queries: string[] = [];
  const target = new URL(db.url);
  const proxy = await opts.proxy?.({ host: target.hostname, port: Number(target.port || 5432) });
  const limits = { rateLimitPoints: 0, authFailuresPerMinute: 0, rateLimitedDelayMs: 0, ...opts.limits };
  const orm = await openOrm(proxy ? proxy.through(db.url) : db.url, {
    onQuery: (sql) => queries.push(sql),
    limits: { ...defaultLimits, ...limits },
  });
  const clock = new FixedClock('2026-11-01T10:00:00Z');
  const server = await startHttpServer({
    orm,
    port: 0,
    clock,
    keyCacheTtlMs: opts.keyCacheTtlMs ?? 0,
    // Tests send many requests from one address: limits are off unless a test sets them.
    limits,
    corsOrigins: opts.corsOrigins,
    trustProxy: opts.trustProxy,
    // Never the sweeps role: tests sweep by hand (`eventRetention.sweep()`) at their injected
    // clock, and this period's sweep, asked for at start, would run at a moment of its own.
    roles: opts.workers === false ? [] : opts.deliveryWorkers === false ? ['sends'] : ['deliveries', 'sends'],
    ...(opts.metricsToken ? { metricsToken: opts.metricsToken } : {}),
    ...(opts.errorReferenceSource ? { errorReferenceSource: opts.errorReferenceSource } : {}),
    ...(opts.liveNetwork ? { liveNetwork: opts.liveNetwork } : {}),
    ...(opts.publicUrl ? { publicUrl: opts.publicUrl } : {}),
    sandboxDelays: opts.sandboxDelays ?? { sent: 10, delivered: 20, read: 30 },
    networkSecret: NETWORK_SECRET,
    mediaLinkSecret: MEDIA_LINK_SECRET,
  });
  afterAll(async () => {
    proxy?.restore();
    await server.close();
    await orm.close();
    await proxy?.close();
    await db.drop();
  });
  const key = async (clinicId: number, scopes: string[]) =>
    (await createApiKey(orm.em.fork(), { clinicId, name: 'test', scopes })).key;
  const send: TestApp['send'] = async (method, path, body, k, headers = {}) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: {
        'content-type': 'application/json',
        ...(k ? { authorization: `Bearer ${k}` } : {}),
        ...headers,
      },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await res.text();
    let parsed: any = text;
    try {
      parsed = JSON.parse(text);
    } catch {}
    return { status: res.status, body: parsed, headers: res.headers };
  };

  return {
    orm,
    server,
    proxy,
    databaseUrl: db.url,
    url: server.url,
    clock,
    queries,
    key,
    async clinicWithKey(kind, scopes, name = `${kind} clinic`, opts = {}) {
      const clinic = await createClinic(orm.em.fork(), {
        name,
        kind,
        mode: opts.mode ?? 'test',
        country: 'IL',
        ...(opts.timezone ? { timezone: opts.timezone } : {}),
        // Each clinic its own messaging number: the network's callbacks name the clinic by it.
        phone: `+9723${5550100 + ++clinicPhones}`,
      });
      return { clinicId: clinic.id, key: await key(clinic.id, scopes) };
    },
    async get(path, k) {
      const res = await fetch(`${server.url}${path}`, { headers: k ? { authorization: `Bearer ${k}` } : {} });
      const text = await res.text();
      let body: any = text;
      try {
        body = JSON.parse(text);
      } catch {}
      return { status: res.status, body, headers: res.headers };
    },
    post: (path, body, k, headers = {}) => send('POST', path, body, k, headers),
    send,
    async settle() {
      await sendsDone(db.url);
      await server.network.settle();
    },
    async gql(query, variables, k) {
      const res = await fetch(`${server.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(k ? { authorization: `Bearer ${k}` } : {}) },
        body: JSON.stringify({ query, variables }),
      });
      return { status: res.status, body: await res.json(), headers: res.headers };
    },
  };
}

let clinicPhones = 0;

/**
 * Waits until the database's chat-send jobs (src/services/chat/send-jobs.ts) are all finished,
 * read on a connection of its own so the app's statement counts stay its own.
 */
/**
 * Another service instance of the same cluster as `app` (its database and secrets), in this
 * process; `close` stops it and its ORM (once, however often called).
 */
export async function secondInstance(
  app: { databaseUrl: string },
  opts: { relayIdleMs?: number } = {},
): Promise<{ server: RunningServer; close: () => Promise<void> }> {
  const orm = await openOrm(app.databaseUrl);
  const server = await startHttpServer({
    orm,
    port: 0,
    keyCacheTtlMs: 0,
    limits: { rateLimitPoints: 0 },
    networkSecret: NETWORK_SECRET,
    mediaLinkSecret: MEDIA_LINK_SECRET,
    ...opts,
  });
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= server.close().then(() => orm.close());
    return closing;
  };
  return { server, close };
}

export async function sendsDone(databaseUrl: string, timeoutMs = 30_000): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const { rows } = await client.query<{ n: number }>(
        `select count(*)::int as n from pgboss.job where name in ('chat-send', 'chat-send-failed') and state in ('created', 'retry', 'active')`,
      );
      if (rows[0].n === 0) return;
      if (Date.now() > until) throw new Error(`${rows[0].n} chat send job(s) still unfinished.`);
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    await client.end();
  }
}

/** The messaging network's callback secret in tests (the sandbox signs with it). */
export const NETWORK_SECRET = 'test-network-secret';
/**
 * Every service process of a test on one database signs with the same secrets (a process whose
 * secrets differ from another live one's refuses to start: src/server/prove-connections.ts).
 */
export const MEDIA_LINK_SECRET = 'test-media-link-secret';

/**
 * A GraphQL selection set of every field of a resource definition (nested shapes included), less
 * `omit` (REST names), each field as GraphQL names it (`camelOf`: first_name → firstName).
 */
export function selectionOf(shape: Shape, omit: readonly string[] = []): string {
  const fields = Object.entries(shape.fields)
    .filter(([name]) => !omit.includes(name))
    .map(([name, f]) => {
      const inner = shapeOf(f.type);
      return inner ? `${camelOf(name)} ${selectionOf(inner)}` : camelOf(name);
    });
  return `{ ${fields.join(' ')} }`;
}
