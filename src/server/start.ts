import { createServer, type IncomingMessage, type Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { MikroORM } from '@mikro-orm/postgresql';
import type pg from 'pg';
import { listenForKeyChanges } from '../auth/key-changes.ts';
import { parseTrustProxy } from '../lib/client-address.ts';
import { type Clock, systemClock } from '../lib/clock.ts';
import { defaultLimits, type Limits } from '../lib/limits.ts';
import type { Sweeper } from '../lib/periodic-sweep.ts';
import { type Role, SERVICE_ROLES } from '../lib/roles.ts';
import { secretsOf } from '../lib/secrets.ts';
import { sessionUrlOf } from '../lib/session-url.ts';
import { pgMediaStore } from '../media/store.ts';
import { CALLBACK_PATH, type MessagingNetwork } from '../network/adapter.ts';
import { SandboxNetwork } from '../network/sandbox.ts';
import { QueuedReceipts } from '../network/sandbox-receipts.ts';
import { startEventRelay } from '../services/events/relay.ts';
import { createApp } from './app.ts';
import type { QueueTuning, RunningJobs } from './jobs.ts';
import { proveConnections } from './prove-connections.ts';
import { startRoleJobs } from './role-jobs.ts';
import { type Subscriptions, serveSubscriptions } from './websocket.ts';

export interface RunningServer {
  server: Server;
  url: string;
  app: ReturnType<typeof createApp>;
  network: SandboxNetwork;
  /** The periodic deletion of old events (docs/limits.md, Events), runnable now. */
  eventRetention: Sweeper;
  /** The periodic deletion of unreferenced media files, runnable now. */
  mediaSweep: Sweeper;
  /** graphql-ws at /graphql (src/server/websocket.ts). */
  subscriptions: Subscriptions;
  /** The job queue, and this process's workers as its roles say. */
  jobs: RunningJobs;
  close(): Promise<void>;
}

/** Starts the one HTTP server on host:port (port 0 picks a free one, as tests do). */
export async function startHttpServer(opts: {
  orm: MikroORM;
  port: number;
  host?: string;
  clock?: Clock;
  keyCacheTtlMs?: number;
  /** Limits and budgets other than the defaults (src/lib/limits.ts). */
  limits?: Partial<Limits>;
  /** Origins browsers may call from (CORS); empty or absent: any, without credentials. */
  corsOrigins?: readonly string[];
  /** On close, how long requests in flight may take to finish before their connections are cut. */
  shutdownGraceMs?: number;
  /** The event relay's pace with no subscriber in this process (relay.ts IDLE_ADVANCE_MS; tests lengthen it). */
  relayIdleMs?: number;
  /** The network's callback secret; a random one per process when absent (the sandbox's own). */
  networkSecret?: string;
  /** Receipt delays of the sandbox network, in ms. */
  sandboxDelays?: { sent: number; delivered: number; read: number };
  /** The HMAC key of media links; a random one per process when absent. */
  mediaLinkSecret?: string;
  /** The address clients reach the service at (media links); the listening address when absent. */
  publicUrl?: string;
  /**
   * The messaging network live clinics send through (docs/test-mode.md); absent, a live clinic's
   * send is a 503 `network_not_configured`. Test clinics always use this process's sandbox.
   */
  liveNetwork?: MessagingNetwork;
  /** TRUST_PROXY (src/lib/client-address.ts): none by default. */
  trustProxy?: string;
  /** METRICS_TOKEN: GET /metrics for a scraper that sends it (docs/metrics.md); absent, a 404. */
  metricsToken?: string;
  /** Where /errors reads docs/errors.md (the checkout's unless a test names another). */
  errorReferenceSource?: URL;
  /**
   * What else this process does (src/lib/roles.ts): deliveries, sends, sweeps; all of them by
   * default, as `npm start`. Tests leave out the workers and take jobs in hand.
   */
  roles?: readonly Role[];
  /**
   * QUEUE_SUPERVISE_SECONDS / DELIVERY_HEARTBEAT_SECONDS, as `npm run worker` gets them: every
   * process's start sets the delivery queue's heartbeat (updateQueue), so a server started
   * without them would put back the default under the workers' feet.
   */
  tuning?: QueueTuning;
}): Promise<RunningServer> {
  const secrets = secretsOf(opts.networkSecret, opts.mediaLinkSecret);
  const networkSecret = secrets.network;
  let url = '';
  const receipts = new QueuedReceipts();
  const network = new SandboxNetwork({
    callbackUrl: () => `${url}${CALLBACK_PATH}`,
    secret: networkSecret,
    clock: opts.clock ?? systemClock,
    ...(opts.sandboxDelays ? { delays: opts.sandboxDelays } : {}),
    receipts,
  });
  const keyCacheTtlMs = opts.keyCacheTtlMs ?? 5000;
  const limits = { ...defaultLimits, ...opts.limits };
  const app = createApp({
    orm: opts.orm,
    clock: opts.clock ?? systemClock,
    keyCacheTtlMs,
    limits,
    rateLimitPool: (await opts.orm.em.getConnection().getNativeClient()) as pg.Pool,
    corsOrigins: opts.corsOrigins ?? [],
    trustProxy: opts.trustProxy ?? '',
    ...(opts.metricsToken ? { metricsToken: opts.metricsToken } : {}),
    ...(opts.errorReferenceSource ? { errorReferenceSource: opts.errorReferenceSource } : {}),
    ...(opts.publicUrl ? { publicUrl: opts.publicUrl } : {}),
    networks: { test: network, live: opts.liveNetwork ?? null },
    networkSecret,
    media: {
      store: pgMediaStore(opts.orm.em),
      secret: secrets.mediaLinks,
      baseUrl: () => opts.publicUrl ?? url,
    },
  });
  // Committed events, any process's, reach this process's subscribers (src/services/events/relay.ts).
  // Started and proven before anything else runs: a start refused here (no event path, other
  // secrets than a live instance's) has taken no job and answered no request.
  const relay = await startEventRelay({
    databaseUrl: sessionUrlOf(opts.orm),
    em: opts.orm.em,
    hub: app.eventHub,
    tag: secrets.fingerprint,
    ...(opts.relayIdleMs ? { idleAdvanceMs: opts.relayIdleMs } : {}),
  });
  try {
    await proveConnections(opts.orm, relay, secrets);
  } catch (err) {
    await relay.close();
    network.close();
    throw err;
  }
  const chat = app.deps.services.chat;
  const jobs = await startRoleJobs({
    orm: opts.orm,
    clock: opts.clock ?? systemClock,
    limits,
    tuning: opts.tuning,
    roles: opts.roles ?? SERVICE_ROLES,
    // The network and media links as this process's requests have them.
    chat: { networks: chat.networks, ...(chat.media ? { mediaLink: chat.media.link } : {}) },
    sandbox: { network, receipts },
  });
  // With a key cache, key changes made by other processes (the CLI) must reach it at once.
  // Open websockets must hear of a revoked key at once too (src/server/websocket.ts): always on.
  const keyChanges = await listenForKeyChanges(sessionUrlOf(opts.orm));
  // Every connection is bounded (docs/limits.md, Connections): its headers and its whole request
  // must arrive in time (checked each second, Node's default being 30 s), there are at most
  // maxConnections of them, and one whose response went out before its body was read is closed.
  const server = createServer(
    {
      ServerResponse: ClosingResponse,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: Math.max(limits.requestTimeoutMs, limits.headersTimeoutMs),
      connectionsCheckingInterval: 1000,
    },
    app.handler,
  );
  server.maxConnections = limits.maxConnections;
  // Responses under way, so closing can tell them to end their connection after them.
  const inFlight = new Set<ServerResponse>();
  let closing = false;
  server.on('request', (_req, res) => {
    inFlight.add(res);
    if (closing) res.setHeader('connection', 'close');
    res.on('close', () => {
      inFlight.delete(res);
      if (closing) server.closeIdleConnections();
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  url = `http://${opts.host ?? '127.0.0.1'}:${port}`;
  const subscriptions = serveSubscriptions(server, {
    runner: app.runner,
    limits,
    trustProxy: parseTrustProxy(opts.trustProxy ?? ''),
  });
  const sweeps = jobs.sweeps as NonNullable<RunningJobs['sweeps']>;
  return {
    server,
    app,
    network,
    eventRetention: sweeps.eventRetention,
    mediaSweep: sweeps.mediaSweep,
    subscriptions,
    jobs,
    url,
    // Stop accepting, close idle keep-alive connections, let requests in flight finish (each
    // connection closes after its response), and cut what is still open after the grace period.
    close: async () => {
      closing = true;
      // Upgraded sockets are no longer the server's connections: closed here, or never.
      await subscriptions.close();
      for (const res of inFlight) if (!res.headersSent) res.setHeader('connection', 'close');
      const grace = setTimeout(() => server.closeAllConnections(), opts.shutdownGraceMs ?? 10_000);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      clearTimeout(grace);
      network.close();
      await jobs.stop(opts.shutdownGraceMs ?? 10_000);
      await keyChanges.close();
      await relay.close();
    },
  };
}

/**
 * A response written before its request's body has arrived (a 413, a 401 before the body was
 * read, a 504 while a client trickles its body) ends its connection: Node would otherwise read
 * and discard the rest of the body, however long and however slowly it comes, to keep the
 * connection alive for a next request.
 */
class ClosingResponse extends ServerResponse<IncomingMessage> {
  override writeHead(...args: [number, any?, any?]): this {
    // A request without a body is not `complete` yet while its handler runs synchronously.
    const { req } = this;
    if (!req.complete && (Number(req.headers['content-length']) > 0 || req.headers['transfer-encoding'])) {
      this.shouldKeepAlive = false;
      lingerBeforeClosing(req.socket);
    }
    return super.writeHead(...(args as [number]));
  }
}

/** How long a connection closed under a body still arriving keeps reading it after the response. */
const LINGER_MS = 100;

/**
 * Closing a socket whose peer is still sending makes the kernel answer with a reset, and a reset
 * throws away what the peer has received but not yet read: the client would see "connection
 * reset" instead of its 413. So the response is sent and the write side ended (FIN) first, the
 * body read on and dropped for LINGER_MS more, and only then the socket closed (nginx's lingering
 * close, bounded in time: a client that keeps sending is cut after it).
 */
function lingerBeforeClosing(socket: Socket) {
  socket.destroySoon = function (this: Socket) {
    if (this.writable) this.end();
    const linger = () => {
      const cut = setTimeout(() => this.destroy(), LINGER_MS);
      this.once('close', () => clearTimeout(cut));
    };
    if (this.writableFinished) linger();
    else this.once('finish', linger);
  };
}
