import { openOrm } from '../src/db/orm.ts';
import { startHttpServer } from '../src/server/start.ts';

/**
 * A service process for test/sandbox-receipts-kill.test.ts: the real server on DATABASE_URL with
 * its workers on, as `npm start` runs it, the sandbox's receipt delays from SANDBOX_DELAYS
 * ("sent,delivered,read" ms). It prints its address; the test kills it with SIGKILL.
 */
const [sent, delivered, read] = (process.env.SANDBOX_DELAYS ?? '10,20,30').split(',').map(Number);
const orm = await openOrm(process.env.DATABASE_URL as string);
const running = await startHttpServer({
  orm,
  port: 0,
  networkSecret: process.env.NETWORK_SECRET as string,
  mediaLinkSecret: process.env.MEDIA_LINK_SECRET as string,
  sandboxDelays: { sent, delivered, read },
  limits: { rateLimitPoints: 0, authFailuresPerMinute: 0, rateLimitedDelayMs: 0 },
});
process.stdout.write(`listening on ${running.url}\n`);
