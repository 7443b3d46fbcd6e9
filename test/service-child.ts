import { openOrm } from '../src/lib/database.ts';
import { defaultLimits, type Limits } from '../src/lib/limits.ts';
import { startHttpServer } from '../src/server/start.ts';

/**
 * A service process of its own for the cross-process tests (test/caps-processes.test.ts): the real
 * server on DATABASE_URL (and DATABASE_SESSION_URL when set: DATABASE_URL is then a transaction
 * pooler's, src/lib/session-url.ts), its workers off, its limits those of LIMITS (JSON,
 * src/lib/limits.ts) over the defaults. It prints its address; the test talks to it over HTTP and
 * websockets, and may kill it with SIGKILL.
 */
const limits = { ...defaultLimits, ...(JSON.parse(process.env.LIMITS ?? '{}') as Partial<Limits>) };
const orm = await openOrm(process.env.DATABASE_URL as string, {
  limits,
  ...(process.env.DATABASE_SESSION_URL ? { sessionUrl: process.env.DATABASE_SESSION_URL } : {}),
});
const running = await startHttpServer({
  orm,
  port: 0,
  workers: false,
  networkSecret: process.env.NETWORK_SECRET as string,
  mediaLinkSecret: process.env.MEDIA_LINK_SECRET as string,
  limits,
});
process.stdout.write(`listening on ${running.url}\n`);
