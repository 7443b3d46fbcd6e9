import type { MikroORM } from '@mikro-orm/postgresql';
import { openOrm } from '../db/orm.ts';
import { seedDemo } from '../demo/seed-demo.ts';
import { Clinic } from '../entities/index.ts';
import { systemClock } from '../lib/clock.ts';
import { type Config, connectionOf, limitsOf, rolesOf } from '../lib/config.ts';
import { migrate, startDatabase } from '../lib/database.ts';
import type { Limits } from '../lib/limits.ts';
import { logger } from '../lib/logger.ts';
import type { Role } from '../lib/roles.ts';
import { configuredSecrets, secretsOf } from '../lib/secrets.ts';
import { sessionUrlOf } from '../lib/session-url.ts';
import { signMediaLink } from '../media/links.ts';
import { CALLBACK_PATH } from '../network/adapter.ts';
import { SandboxNetwork } from '../network/sandbox.ts';
import { QueuedReceipts } from '../network/sandbox-receipts.ts';
import { queueTuningOf } from './jobs.ts';
import { startPresence } from './presence.ts';
import { startRoleJobs } from './role-jobs.ts';
import { startHttpServer } from './start.ts';
import { printWelcome } from './welcome.ts';

/**
 * `npm start` and `npm run worker`: one process of the service, doing what its roles say
 * (src/lib/roles.ts; ROLES, else `defaults`). The database (embedded unless DATABASE_URL), its
 * migrations (under a lock: processes starting together migrate once), then the server with its
 * jobs (http), or the jobs alone. With http, an empty database gets the demo data and the welcome
 * text is printed. SIGTERM/SIGINT: stop taking work, let work under way finish (SHUTDOWN_GRACE_MS), exit.
 */
export async function runProcess(config: Config, defaults: readonly Role[]): Promise<void> {
  const roles = rolesOf(config, defaults);
  const db = await startDatabase({
    url: config.DATABASE_URL,
    dataDir: config.DATA_DIR,
    port: config.EMBEDDED_PG_PORT,
  });
  const limits = limitsOf(config);
  const connection = connectionOf(config);
  let orm: MikroORM | undefined;
  let stopParts: (() => Promise<void>) | undefined;
  try {
    orm = await openOrm(db.url, { limits, ...connection });
    // Migrations run on a connection of their own, without the request deadline, on the session
    // address (src/lib/session-url.ts): straight to PostgreSQL, not through a pooler's limits.
    const migrating = await openOrm(connection.sessionUrl ?? db.url, { limits, requestTimeouts: false });
    const applied = await migrate(migrating).finally(() => migrating.close());
    if (applied.length) logger.info({ migrations: applied }, 'migrations applied');
    stopParts = roles.includes('http')
      ? await startServerRoles(orm, config, limits, roles)
      : await startBackgroundRoles(orm, config, limits, roles);
  } catch (err) {
    // Leave nothing behind (the embedded PostgreSQL stops unless another process uses it).
    logger.fatal({ err }, 'start failed');
    await orm?.close();
    await db.stop();
    process.exit(1);
  }
  logger.info({ pid: process.pid, roles }, 'started');
  // Tests that fork a worker wait for this before they go on.
  if (process.send) process.send('ready');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    await stopParts?.();
    await orm?.close();
    await db.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

async function startServerRoles(orm: MikroORM, config: Config, limits: Limits, roles: Role[]) {
  const secrets = configuredSecrets(config);
  const em = orm.em.fork();
  const demo = (await em.count(Clinic, {})) === 0 ? await seedDemo(em) : null;
  const running = await startHttpServer({
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
    roles,
    tuning: queueTuningOf(config),
    sandboxDelays: config.SANDBOX_RECEIPT_DELAYS_MS,
  });
  printWelcome(running.url, demo);
  return () => running.close();
}

/**
 * The roles without the server. Chat sends need what the server's requests have: the network's
 * secret and the service's address for its callbacks (PUBLIC_URL), and the media links' secret.
 * Without them sends are left to the instances (a warning), or, asked for by ROLES, refused.
 */
async function startBackgroundRoles(orm: MikroORM, config: Config, limits: Limits, roles: Role[]) {
  const clock = systemClock;
  const configured = configuredSecrets(config);
  const publicUrl = config.PUBLIC_URL?.replace(/\/+$/, '');
  const canSend = Boolean(publicUrl && configured.network && configured.mediaLinks);
  if (roles.includes('sends') && !canSend) {
    const why =
      'chat sends need PUBLIC_URL and the secrets (ROOT_SECRET, or NETWORK_SECRET and MEDIA_LINK_SECRET) here';
    if (config.ROLES !== undefined) throw new Error(`ROLES has sends: ${why} (docs/scale.md)`);
    logger.warn(`${why}: they are left to the instances`);
  }
  if (!canSend || !roles.includes('sends'))
    return startBackgroundJobs(
      orm,
      config,
      limits,
      roles.filter((r) => r !== 'sends'),
    );
  const secrets = secretsOf(configured.network, configured.mediaLinks);
  // Its secrets are compared with the instances' before it takes any job.
  const presence = await startPresence(sessionUrlOf(orm), secrets);
  const receipts = new QueuedReceipts();
  const network = new SandboxNetwork({
    callbackUrl: () => `${publicUrl}${CALLBACK_PATH}`,
    secret: secrets.network,
    clock,
    delays: config.SANDBOX_RECEIPT_DELAYS_MS,
    receipts,
  });
  try {
    const stopJobs = await startBackgroundJobs(orm, config, limits, roles, {
      // No live network is configured in this release (docs/test-mode.md): live clinics' sends
      // were refused when asked, and a send left over waits for one.
      chat: {
        networks: { test: network, live: null },
        mediaLink: (clinicId: number, key: string, filename: string | null, mime: string) =>
          signMediaLink(
            secrets.mediaLinks,
            publicUrl as string,
            { clinicId, key, filename, mime },
            clock.now(),
          ),
      },
      sandbox: { network, receipts },
    });
    return async () => {
      await stopJobs();
      network.close();
      await presence.close();
    };
  } catch (err) {
    network.close();
    await presence.close();
    throw err;
  }
}

async function startBackgroundJobs(
  orm: MikroORM,
  config: Config,
  limits: Limits,
  roles: Role[],
  sending?: Pick<Parameters<typeof startRoleJobs>[0], 'chat' | 'sandbox'>,
) {
  const jobs = await startRoleJobs({
    orm,
    clock: systemClock,
    limits,
    tuning: queueTuningOf(config),
    roles,
    ...sending,
  });
  return () => jobs.stop(config.SHUTDOWN_GRACE_MS);
}
