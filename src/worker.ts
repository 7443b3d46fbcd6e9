import { systemClock } from './lib/clock.ts';
import { connectionOf, limitsOf, loadConfig } from './lib/config.ts';
import { openOrm, startDatabase } from './lib/database.ts';
import { logger } from './lib/logger.ts';
import { configuredSecrets } from './lib/secrets.ts';
import { signMediaLink } from './media/links.ts';
import { CALLBACK_PATH } from './network/adapter.ts';
import { SandboxNetwork } from './network/sandbox.ts';
import { QueuedReceipts } from './network/sandbox-receipts.ts';
import { queueTuningOf, startJobs } from './server/jobs.ts';
import { chatSendWorkers } from './services/chat/send-worker.ts';
import { deliveryWorker } from './webhooks/worker.ts';

/**
 * `npm run worker`: the job queue's workers without the HTTP server, for scale (issue 17). Any
 * number may run beside the service (WORKERS=off there to leave deliveries to them): pg-boss hands
 * each job to one of them. Same configuration as `npm start`; the service migrates the database.
 * SIGTERM/SIGINT: stop fetching, let attempts under way finish (SHUTDOWN_GRACE_MS), exit.
 */
const config = loadConfig();
const db = await startDatabase({
  url: config.DATABASE_URL,
  dataDir: config.DATA_DIR,
  port: config.EMBEDDED_PG_PORT,
});
const limits = limitsOf(config);
const secrets = configuredSecrets(config);
const orm = await openOrm(db.url, { limits, ...connectionOf(config) });
// Chat sends need what the service's own requests have: the network's secret and the service's
// address for its callbacks, and the media links' secret for media. Without them this process
// leaves chat sends to the service's workers (WORKERS=on there).
const publicUrl = config.PUBLIC_URL;
const receipts = new QueuedReceipts();
const network =
  publicUrl && secrets.network
    ? new SandboxNetwork({
        callbackUrl: () => `${publicUrl.replace(/\/+$/, '')}${CALLBACK_PATH}`,
        secret: secrets.network,
        clock: systemClock,
        delays: config.SANDBOX_RECEIPT_DELAYS_MS,
        receipts,
      })
    : null;
if (!network)
  logger.warn(
    'chat sends are left to the service: set PUBLIC_URL and NETWORK_SECRET (or ROOT_SECRET) to send here',
  );
const mediaSecret = secrets.mediaLinks;
const jobs = await startJobs({
  orm,
  clock: systemClock,
  workers: [
    deliveryWorker({
      em: orm.em,
      clock: systemClock,
      timeoutMs: limits.webhookTimeoutMs,
    }),
    ...(network
      ? chatSendWorkers({
          em: orm.em,
          // No live network is configured in this release (docs/test-mode.md): live clinics' sends
          // were refused when asked, and a send left over waits for one.
          networks: { test: network, live: null },
          clock: systemClock,
          ...(publicUrl && mediaSecret
            ? {
                mediaLink: (clinicId: number, key: string, filename: string | null, mime: string) =>
                  signMediaLink(mediaSecret, publicUrl, { clinicId, key, filename, mime }, systemClock.now()),
              }
            : {}),
        })
      : []),
  ],
  tuning: queueTuningOf(config),
  // The cluster's sweeps run here too (src/server/sweeps.ts): once per period, whoever takes them.
  sweeps: { retentionDays: limits.eventRetentionDays, work: true },
});
// Its sandbox's receipts (src/network/sandbox-receipts.ts), any process's, posted to the service.
if (network) await receipts.start(jobs.queue, (r) => network.postReceipt(r));
logger.info({ pid: process.pid }, 'worker started');
// The SIGKILL test waits for this line before it starts the hanging delivery.
if (process.send) process.send('ready');

let stopping = false;
async function stop(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'worker stopping');
  await jobs.stop(config.SHUTDOWN_GRACE_MS);
  network?.close();
  await orm.close();
  await db.stop();
  process.exit(0);
}
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));
