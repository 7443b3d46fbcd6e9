import { randomBytes } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MikroORM } from '@mikro-orm/postgresql';
import type pg from 'pg';
import { listenForKeyChanges } from '../auth/key-changes.ts';
import { type Clock, systemClock } from '../lib/clock.ts';
import { defaultLimits, type Limits } from '../lib/limits.ts';
import { pgMediaStore } from '../media/store.ts';
import { CALLBACK_PATH } from '../network/callback.ts';
import { SandboxNetwork } from '../network/sandbox.ts';
import { createApp } from './app.ts';

export interface RunningServer {
  server: Server;
  url: string;
  app: ReturnType<typeof createApp>;
  network: SandboxNetwork;
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
  /** The network's callback secret; a random one per process when absent (the sandbox's own). */
  networkSecret?: string;
  /** Receipt delays of the sandbox network, in ms. */
  sandboxDelays?: { sent: number; delivered: number; read: number };
  /** The HMAC key of media links; a random one per process when absent. */
  mediaLinkSecret?: string;
  /** The address clients reach the service at (media links); the listening address when absent. */
  publicUrl?: string;
  /** Plain http to loopback addresses for media URLs (tests, local development). */
  allowLoopbackUrls?: boolean;
}): Promise<RunningServer> {
  const networkSecret = opts.networkSecret ?? randomBytes(32).toString('hex');
  let url = '';
  const network = new SandboxNetwork({
    callbackUrl: () => `${url}${CALLBACK_PATH}`,
    secret: networkSecret,
    clock: opts.clock ?? systemClock,
    ...(opts.sandboxDelays ? { delays: opts.sandboxDelays } : {}),
  });
  const keyCacheTtlMs = opts.keyCacheTtlMs ?? 5000;
  const app = createApp({
    orm: opts.orm,
    clock: opts.clock ?? systemClock,
    keyCacheTtlMs,
    limits: { ...defaultLimits, ...opts.limits },
    rateLimitPool: (await opts.orm.em.getConnection().getNativeClient()) as pg.Pool,
    corsOrigins: opts.corsOrigins ?? [],
    network,
    networkSecret,
    media: {
      store: pgMediaStore(opts.orm.em),
      secret: opts.mediaLinkSecret ?? randomBytes(32).toString('hex'),
      baseUrl: () => opts.publicUrl ?? url,
      allowLoopback: opts.allowLoopbackUrls ?? false,
    },
  });
  // With a key cache, key changes made by other processes (the CLI) must reach it at once.
  const keyChanges = keyCacheTtlMs > 0 ? await listenForKeyChanges(opts.orm.config.get('clientUrl')) : null;
  const server = createServer(app.handler);
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
  return {
    server,
    app,
    network,
    url,
    // Stop accepting, close idle keep-alive connections, let requests in flight finish (each
    // connection closes after its response), and cut what is still open after the grace period.
    close: async () => {
      closing = true;
      for (const res of inFlight) if (!res.headersSent) res.setHeader('connection', 'close');
      const grace = setTimeout(() => server.closeAllConnections(), opts.shutdownGraceMs ?? 10_000);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      clearTimeout(grace);
      network.close();
      await keyChanges?.close();
    },
  };
}
