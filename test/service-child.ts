import { openOrm } from '../src/db/orm.ts';
import { defaultLimits, type Limits } from '../src/lib/limits.ts';
import { startHttpServer } from '../src/server/start.ts';

/**
 * A service process of its own for the cross-process tests (caps-processes, chat-send-queue,
 * subscriptions-processes): the real server on DATABASE_URL (and DATABASE_SESSION_URL when set:
 * DATABASE_URL is then a transaction pooler's, src/lib/session-url.ts), with its workers off, so a
 * send it answers is recorded with its job and nothing more. Its limits are LIMITS (JSON,
 * src/lib/limits.ts) over the defaults, the rate limits off unless LIMITS sets them, as the tests'
 * own apps have them. It prints its address; the test talks to it over HTTP and websockets, and
 * may kill it with SIGKILL.
 */
const limits = {
  ...defaultLimits,
  rateLimitPoints: 0,
  authFailuresPerMinute: 0,
  rateLimitedDelayMs: 0,
  ...(JSON.parse(process.env.LIMITS ?? '{}') as Partial<Limits>),
};
const orm = await openOrm(process.env.DATABASE_URL as string, {
  limits,
  ...(process.env.DATABASE_SESSION_URL ? { sessionUrl: process.env.DATABASE_SESSION_URL } : {}),
});
const running = await startHttpServer({
  orm,
  port: 0,
  roles: [],
  networkSecret: process.env.NETWORK_SECRET as string,
  mediaLinkSecret: process.env.MEDIA_LINK_SECRET as string,
  sandboxDelays: { sent: 10, delivered: 20, read: 30 },
  limits,
});
process.stdout.write(`listening on ${running.url}\n`);
