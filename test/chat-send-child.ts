import { openOrm } from '../src/lib/database.ts';
import { startHttpServer } from '../src/server/start.ts';

/**
 * A service process for test/chat-send-queue.test.ts: the real server on DATABASE_URL with its
 * workers off (workers: false), so a send it answers is recorded with its job and nothing more. It
 * prints its address; the test sends through it, then kills it with SIGKILL.
 */
const orm = await openOrm(process.env.DATABASE_URL as string);
const running = await startHttpServer({
  orm,
  port: 0,
  workers: false,
  networkSecret: process.env.NETWORK_SECRET as string,
  mediaLinkSecret: process.env.MEDIA_LINK_SECRET as string,
  sandboxDelays: { sent: 10, delivered: 20, read: 30 },
  limits: { rateLimitPoints: 0, authFailuresPerMinute: 0, rateLimitedDelayMs: 0 },
});
process.stdout.write(`listening on ${running.url}\n`);
