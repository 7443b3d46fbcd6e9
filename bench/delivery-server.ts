/**
 * The service as `npm run bench:deliveries` runs it: bench/server.ts's child (IPC 'ready', exits
 * with its parent) with the job queue's workers on (as `npm start` by default; BENCH_WORKERS=off as
 * ROLES without deliveries), its database through PgBouncer under --pooler (bench/child.ts). Its clinic is a
 * test clinic, whose receiver may be plain http on 127.0.0.1 (docs/test-mode.md).
 */
import { openOrm } from '../src/db/orm.ts';
import { startHttpServer } from '../src/server/start.ts';
import { childSettings, serveUntilParentLeaves } from './child.ts';

const url = process.env.BENCH_DATABASE_URL;
if (!url) throw new Error('BENCH_DATABASE_URL is not set');

const settings = childSettings();
const orm = await openOrm(url, settings.orm);
const running = await startHttpServer({
  orm,
  port: 0,
  host: '127.0.0.1',
  limits: { rateLimitPoints: 0 },
  // BENCH_WORKERS=off (bench/deliveries.ts --workers=N): ROLES=http,sends,sweeps, deliveries left to `npm run worker`s.
  ...(process.env.BENCH_WORKERS === 'off' ? { roles: ['sends', 'sweeps'] as const } : {}),
  ...settings.server,
});

serveUntilParentLeaves(running.url, async () => {
  await running.close();
  await orm.close();
});
