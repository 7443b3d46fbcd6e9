import { seedDemo } from './demo/seed-demo.ts';
import { Clinic } from './entities/index.ts';
import { connectionOf, limitsOf, loadConfig } from './lib/config.ts';
import { migrate, openOrm, startDatabase } from './lib/database.ts';
import { logger } from './lib/logger.ts';
import { configuredSecrets } from './lib/secrets.ts';
import { queueTuningOf } from './server/jobs.ts';
import { type RunningServer, startHttpServer } from './server/start.ts';
import { printWelcome } from './server/welcome.ts';

/** `npm start`: database (embedded unless DATABASE_URL), migrations, demo data once, HTTP server. */
const config = loadConfig();
const db = await startDatabase({
  url: config.DATABASE_URL,
  dataDir: config.DATA_DIR,
  port: config.EMBEDDED_PG_PORT,
});
const limits = limitsOf(config);
const secrets = configuredSecrets(config);
const connection = connectionOf(config);
const orm = await openOrm(db.url, { limits, ...connection }).catch(async (err) => {
  logger.fatal({ err }, 'start failed');
  await db.stop();
  process.exit(1);
});

let running: RunningServer;
try {
  // Migrations run on a connection of their own, without the request deadline, on the session
  // address (src/lib/session-url.ts): straight to PostgreSQL, not through a pooler's limits.
  const migrating = await openOrm(connection.sessionUrl ?? db.url, { limits, requestTimeouts: false });
  const applied = await migrate(migrating).finally(() => migrating.close());
  if (applied.length) logger.info({ migrations: applied }, 'migrations applied');

  const em = orm.em.fork();
  const empty = (await em.count(Clinic, {})) === 0;
  const demo = empty ? await seedDemo(em) : null;

  running = await startHttpServer({
    orm,
    port: config.PORT,
    host: config.HOST,
    keyCacheTtlMs: config.KEY_CACHE_TTL_MS,
    limits,
    corsOrigins: config.CORS_ORIGINS,
    trustProxy: config.TRUST_PROXY,
    shutdownGraceMs: config.SHUTDOWN_GRACE_MS,
    ...(secrets.network ? { networkSecret: secrets.network } : {}),
    ...(secrets.mediaLinks ? { mediaLinkSecret: secrets.mediaLinks } : {}),
    ...(config.PUBLIC_URL ? { publicUrl: config.PUBLIC_URL } : {}),
    ...(config.METRICS_TOKEN ? { metricsToken: config.METRICS_TOKEN } : {}),
    deliveryWorkers: config.WORKERS,
    tuning: queueTuningOf(config),
    sandboxDelays: config.SANDBOX_RECEIPT_DELAYS_MS,
  });
  printWelcome(running.url, demo);
} catch (err) {
  // Leave nothing behind (the embedded PostgreSQL stops unless another process uses it).
  logger.fatal({ err }, 'start failed');
  await orm.close();
  await db.stop();
  process.exit(1);
}

let stopping = false;
async function stop(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'shutting down');
  await running.close();
  await orm.close();
  await db.stop();
  process.exit(0);
}
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));
