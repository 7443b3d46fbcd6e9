import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Pooler, pgbouncerBinary, startPgBouncer } from '../bench/pgbouncer.ts';
import { openOrm } from '../src/db/orm.ts';
import { defaultLimits } from '../src/lib/limits.ts';
import { testDatabase } from './helpers.ts';
import { killAll, startServiceProcess } from './service-process.ts';
import { connect, type TestSocket } from './ws-client.ts';

/**
 * The service behind a transaction-mode pooler (issue 35; docs/scale.md, Connections): real
 * PgBouncer, real service processes (`src/main.ts`, as `npm start` runs it). DATABASE_URL goes
 * through the pooler, DATABASE_SESSION_URL straight to PostgreSQL.
 */
const children: ChildProcess[] = [];
const sockets: TestSocket[] = [];
let db: Awaited<ReturnType<typeof testDatabase>>;
let pooler: Pooler;
/** An operator's PgBouncer that drops the timeout the service would send at connection. */
let lenient: Pooler;

const startService = (env: Record<string, string>) => startServiceProcess(env, children);

/** The instances of one cluster share their secrets (src/lib/secrets.ts). */
const ROOT_SECRET = 'pooler-test-root-secret-0123456789abcdef';

const available = pgbouncerBinary() !== null;
if (!available)
  console.warn('pooler.test.ts skipped: pgbouncer is not installed (apt-get install pgbouncer)');

describe.skipIf(!available)('behind PgBouncer in transaction mode', () => {
  beforeAll(async () => {
    db = await testDatabase();
    pooler = await startPgBouncer(db.url);
    lenient = await startPgBouncer(db.url, { ignoreStartupParameters: ['statement_timeout'] });
  }, 30_000);

  afterAll(async () => {
    await Promise.all(sockets.map((s) => s.dispose()));
    await killAll(children);
    await pooler?.close();
    await lenient?.close();
    await db?.drop();
  });

  it('two instances: subscribers on each get every event once and in order, reads and writes answer', {
    timeout: 120_000,
  }, async () => {
    const first = await startService({
      DATABASE_URL: pooler.through(db.url),
      DATABASE_SESSION_URL: db.url,
      ROOT_SECRET,
    });
    const second = await startService({
      DATABASE_URL: pooler.through(db.url),
      DATABASE_SESSION_URL: db.url,
      ROOT_SECRET,
    });
    const banner = first.out();
    const reader = /every read scope:\s+(\S+)/.exec(banner)?.[1];
    const writer = /clinic writes:\s+(\S+)/.exec(banner)?.[1];
    expect(reader && writer, banner).toBeTruthy();
    const instances = [first.url, second.url];
    const subs = instances.flatMap((url) =>
      [0, 1].map(() => {
        // The events subscription needs webhooks:manage: the clinic-writes key's, not the reading one's.
        const s = connect(url, { Authorization: `Bearer ${writer}` });
        sockets.push(s);
        return s.subscribe('subscription { events(types: [PATIENT_CREATED]) { id data } }');
      }),
    );
    const create = async (url: string, name: string) => {
      const r = await fetch(`${url}/v1/patients`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${writer}` },
        body: JSON.stringify({ first_name: name, last_name: 'Pooler' }),
      });
      expect(r.status, await r.clone().text()).toBe(201);
      return (await r.json()).data.id as string;
    };
    // A subscription registers some time after its socket opens: probe until all have one.
    const deadline = Date.now() + 20_000;
    while (!subs.every((sub) => sub.results.length > 0)) {
      if (Date.now() > deadline)
        throw new Error(`the subscriptions never received a probe: ${subs.map((s) => s.results.length)}`);
      await create(first.url, 'Probe');
      await new Promise((r) => setTimeout(r, 200));
    }
    await new Promise((r) => setTimeout(r, 300));
    const before = subs.map((sub) => sub.results.length);
    const created: string[] = [];
    for (let i = 0; i < 10; i++) created.push(await create(instances[i % 2], `P${i}`));
    await Promise.all(subs.map((sub, i) => sub.waitFor(before[i] + 10, 15_000)));
    await new Promise((r) => setTimeout(r, 300));
    for (const [i, sub] of subs.entries()) {
      expect(sub.errors).toEqual([]);
      const got = sub.results.slice(before[i]);
      expect(got.map((r) => r.events.data.id)).toEqual(created);
      const ids = got.map((r) => Number(String(r.events.id).replace(/\D/g, '')));
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
    }
    // Reads through the pooler, on both instances: the same statement many times, on whatever
    // server connection the pooler lends (a named statement would be missing on most of them).
    const reads = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        fetch(`${instances[i % 2]}/v1/patients?limit=5`, { headers: { authorization: `Bearer ${reader}` } }),
      ),
    );
    expect(reads.map((r) => r.status)).toEqual(reads.map(() => 200));
  });

  it('a transaction sets its own timeout through the pooler, and leaves none on the session', async () => {
    const orm = await openOrm(pooler.through(db.url), { sessionUrl: db.url, poolMax: 2 });
    try {
      const inside = await orm.em.transactional((em) => em.execute('show statement_timeout'));
      expect(inside[0].statement_timeout).toBe(`${defaultLimits.requestDeadlineMs / 1000}s`);
      const outside = await orm.em.getConnection().execute('show statement_timeout');
      expect(outside[0].statement_timeout).toBe('0');
    } finally {
      await orm.close();
    }
  });

  it('without DATABASE_SESSION_URL, the service refuses to start and names it', {
    timeout: 60_000,
  }, async () => {
    // The timeout as a startup parameter: PgBouncer refuses the connection.
    const refused = await startService({ DATABASE_URL: pooler.through(db.url) }).catch((e) => e);
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/unsupported startup parameter.*DATABASE_SESSION_URL/);
    // With that parameter ignored, the LISTEN goes through the pooler: the event path is proven
    // at start, and found not to work.
    const silent = await startService({ DATABASE_URL: lenient.through(db.url) }).catch((e) => e);
    expect(silent.code).toBe(1);
    expect(silent.out).toMatch(/Live events cannot work.*DATABASE_SESSION_URL/);
  });

  it('beside running instances, one with other secrets (random ones) refuses to start and names ROOT_SECRET', {
    timeout: 60_000,
  }, async () => {
    const refused = await startService({
      DATABASE_URL: pooler.through(db.url),
      DATABASE_SESSION_URL: db.url,
    }).catch((e) => e);
    expect(refused.code, refused.message).toBe(1);
    expect(refused.out).toMatch(/Another service process serves this database.*ROOT_SECRET/);
    const other = await startService({
      DATABASE_URL: pooler.through(db.url),
      DATABASE_SESSION_URL: db.url,
      ROOT_SECRET: ROOT_SECRET.replace(/^./, 'x'),
    }).catch((e) => e);
    expect(other.code).toBe(1);
    expect(other.out).toMatch(/other secrets.*ROOT_SECRET/);
  });
});
