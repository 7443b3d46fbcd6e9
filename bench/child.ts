import { configuredSecrets } from '../src/lib/secrets.ts';

/**
 * The IPC protocol of the benchmark's server processes (bench/server.ts, bench/raw-server.ts):
 * 'ready' with the URL once listening, 'memory' on request, and a clean exit (so --cpu-prof can
 * write its profile) on SIGTERM, SIGINT or when the parent's IPC channel closes.
 */
export interface MemoryReport {
  type: 'memory';
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
}

export type ChildMessage =
  | { type: 'ready'; url: string; pid: number }
  | { type: 'memory'; gc?: boolean }
  | MemoryReport;

export function serveUntilParentLeaves(url: string, close: () => Promise<void>): void {
  if (!process.send) throw new Error('start this file through bench/patients.ts (it needs an IPC channel)');
  let closing = false;
  const stop = () => {
    if (closing) return;
    closing = true;
    // A stuck close must not keep a benchmark server alive.
    setTimeout(() => process.exit(0), 3000).unref();
    close().finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.on('disconnect', stop);
  process.on('message', (m: unknown) => {
    const msg = m as { type?: string; gc?: boolean };
    if (msg?.type === 'memory') {
      // With --expose-gc, { gc: true } asks for the live heap: what survives a full collection.
      const gc = (globalThis as { gc?: () => void }).gc;
      if (msg.gc && gc) gc();
      const u = process.memoryUsage();
      const reply: MemoryReport = {
        type: 'memory',
        rss: u.rss,
        heapUsed: u.heapUsed,
        heapTotal: u.heapTotal,
        external: u.external,
      };
      process.send?.(reply);
    }
  });
  const ready: ChildMessage = { type: 'ready', url, pid: process.pid };
  process.send(ready);
}

/**
 * What a bench's service child (bench/server.ts, bench/delivery-server.ts) takes from its harness
 * beside BENCH_DATABASE_URL, both unset unless the harness runs several processes or a pooler:
 * - BENCH_DATABASE_SESSION_URL: DATABASE_SESSION_URL (src/lib/session-url.ts), the direct address
 *   of BENCH_DATABASE_URL's database when that one goes through PgBouncer (`--pooler`);
 * - BENCH_ROOT_SECRET: ROOT_SECRET (src/lib/secrets.ts), the same in every process of the bench, or
 *   the second service process on the database refuses to start.
 */
export function childSettings(): {
  orm: { sessionUrl?: string };
  server: { networkSecret?: string; mediaLinkSecret?: string };
} {
  const sessionUrl = process.env.BENCH_DATABASE_SESSION_URL;
  const secrets = configuredSecrets({ ROOT_SECRET: process.env.BENCH_ROOT_SECRET || undefined });
  return {
    orm: sessionUrl ? { sessionUrl } : {},
    server: {
      ...(secrets.network ? { networkSecret: secrets.network } : {}),
      ...(secrets.mediaLinks ? { mediaLinkSecret: secrets.mediaLinks } : {}),
    },
  };
}
