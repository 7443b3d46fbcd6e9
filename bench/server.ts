/**
 * The real app as a benchmark target: `node bench/server.ts`, started by bench/patients.ts as a
 * child process with an IPC channel. It opens the ORM on BENCH_DATABASE_URL (through PgBouncer under
 * --pooler, BENCH_DATABASE_SESSION_URL then direct: bench/child.ts childSettings), serves on an
 * ephemeral loopback port, and reports `{ type: 'ready', url }` over IPC. It exits on SIGTERM or
 * when the parent goes away (the IPC channel closes), so it never outlives the benchmark.
 */
import { openOrm } from '../src/db/orm.ts';
import { startHttpServer } from '../src/server/start.ts';
import { childSettings, serveUntilParentLeaves } from './child.ts';
import { installCapture, startRecording, stopRecording } from './statement-capture.ts';

const url = process.env.BENCH_DATABASE_URL;
if (!url) throw new Error('BENCH_DATABASE_URL is not set');

// A capture process (never the one being timed) records the statements of a request on request:
// 'capture-start', then the request, then 'capture-stop' answers 'captured' with them.
if (process.env.BENCH_CAPTURE === '1') {
  installCapture();
  process.on('message', (m: { type?: string }) => {
    if (m?.type === 'capture-start') {
      startRecording();
      process.send?.({ type: 'capture-started' });
    } else if (m?.type === 'capture-stop') process.send?.({ type: 'captured', statements: stopRecording() });
  });
}

// Through PgBouncer (a bench's --pooler): the session's connections on BENCH_DATABASE_SESSION_URL.
const settings = childSettings();
const orm = await openOrm(url, settings.orm);
// No rate limit for the throughput benchmark (one key at thousands of requests a second); the
// abuse benchmark (BENCH_LIMITS=default) measures the service with its default limits. The
// fan-out benchmark opens its thousand sockets with one key from one address: no websocket caps.
const limits =
  process.env.BENCH_LIMITS === 'default'
    ? {}
    : {
        rateLimitPoints: 0,
        wsConnectionsPercent: 100,
        wsMaxPerKey: 1_000_000,
        wsMaxUnauthenticatedPerAddress: 1_000_000,
      };
const running = await startHttpServer({ orm, port: 0, host: '127.0.0.1', limits, ...settings.server });

serveUntilParentLeaves(running.url, async () => {
  await running.close();
  await orm.close();
});
