import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MikroORM } from '@mikro-orm/postgresql';
import { listenForKeyChanges } from '../auth/key-changes.ts';
import { type Clock, systemClock } from '../lib/clock.ts';
import { createApp } from './app.ts';

export interface RunningServer {
  server: Server;
  url: string;
  app: ReturnType<typeof createApp>;
  close(): Promise<void>;
}

/** Starts the one HTTP server on host:port (port 0 picks a free one, as tests do). */
export async function startHttpServer(opts: {
  orm: MikroORM;
  port: number;
  host?: string;
  clock?: Clock;
  keyCacheTtlMs?: number;
  /** Requests per second per API key; 0 turns limiting off (tests, the benchmark). */
  rateLimitPerSecond: number;
}): Promise<RunningServer> {
  const keyCacheTtlMs = opts.keyCacheTtlMs ?? 5000;
  const app = createApp({
    orm: opts.orm,
    clock: opts.clock ?? systemClock,
    keyCacheTtlMs,
    rateLimitPerSecond: opts.rateLimitPerSecond,
  });
  // With a key cache, key changes made by other processes (the CLI) must reach it at once.
  const keyChanges = keyCacheTtlMs > 0 ? await listenForKeyChanges(opts.orm.config.get('clientUrl')) : null;
  const server = createServer(app.handler);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    server,
    app,
    url: `http://${opts.host ?? '127.0.0.1'}:${port}`,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      await keyChanges?.close();
    },
  };
}
