import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Pooler, pgbouncerBinary, startPgBouncer } from '../bench/pgbouncer.ts';
import { testDatabase } from './helpers.ts';
import { killAll, type ServiceProcess, startServiceProcess } from './service-process.ts';
import { type Receiver, startReceiver } from './webhook-receiver.ts';
import { startWorkerProcess } from './worker-process.ts';
import { connect, type TestSocket } from './ws-client.ts';

/**
 * The deployment docs/scale.md describes, as real processes (issue 35): PgBouncer in transaction
 * mode in front of the database; three service instances (ROLES=http,sends,sweeps) and two `npm run worker`s
 * through it, the LISTENs and locks on DATABASE_SESSION_URL; one ROOT_SECRET.
 * - subscribers spread over the instances each get every event once and in order; one instance is
 *   killed with SIGKILL mid-stream, and its clients resume on another with `events(after:)`,
 *   missing nothing;
 * - webhook deliveries arrive at least once (the duplicate rate is counted), never more than the
 *   per-subscription cap at once;
 * - each sweep runs once per period, not once per process.
 */
const ROOT_SECRET = 'cluster-test-root-secret-0123456789abcdef';
const SWEEP_SECONDS = 2;
/** How many sweep periods the test watches at least. */
const SWEEP_PERIODS = 5;
const WRITES = 30;
const children: ChildProcess[] = [];
const sockets: TestSocket[] = [];
let db: Awaited<ReturnType<typeof testDatabase>>;
let pooler: Pooler;
let receiver: Receiver;
let instances: ServiceProcess[];

const available = pgbouncerBinary() !== null;
if (!available)
  console.warn('cluster.test.ts skipped: pgbouncer is not installed (apt-get install pgbouncer)');

describe.skipIf(!available)('three instances and two workers behind PgBouncer', () => {
  let reader: string;
  let writer: string;
  let startedAt: Date;

  beforeAll(async () => {
    db = await testDatabase();
    pooler = await startPgBouncer(db.url, { poolSize: 30 });
    receiver = await startReceiver();
    receiver.mode = { delayMs: 50 };
    const env = {
      DATABASE_URL: pooler.through(db.url),
      DATABASE_SESSION_URL: db.url,
      ROOT_SECRET,
      SWEEP_INTERVAL_SECONDS: String(SWEEP_SECONDS),
    };
    startedAt = new Date();
    // The first seeds the demo and prints its keys; the others start on the seeded database.
    const first = await startServiceProcess({ ...env, ROLES: 'http,sends,sweeps' }, children);
    const rest = await Promise.all([
      startServiceProcess({ ...env, ROLES: 'http,sends,sweeps' }, children),
      startServiceProcess({ ...env, ROLES: 'http,sends,sweeps' }, children),
      startWorkerProcess(env.DATABASE_URL, children, env),
      startWorkerProcess(env.DATABASE_URL, children, env),
    ]);
    instances = [first, rest[0] as ServiceProcess, rest[1] as ServiceProcess];
    reader = /every read scope:\s+(\S+)/.exec(first.out())?.[1] as string;
    writer = /clinic writes:\s+(\S+)/.exec(first.out())?.[1] as string;
    expect(reader && writer, first.out()).toBeTruthy();
  }, 120_000);

  afterAll(async () => {
    await Promise.all(sockets.map((s) => s.dispose()));
    await killAll(children);
    await receiver?.close();
    await pooler?.close();
    await db?.drop();
  });

  it('subscribers on every instance get every event once and in order, through a SIGKILL; deliveries at least once under the cap; sweeps once per period', {
    timeout: 180_000,
  }, async () => {
    const hook = await fetch(`${instances[0].url}/v1/webhooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${writer}` },
      body: JSON.stringify({ url: receiver.url, event_types: ['patient.created'] }),
    });
    expect(hook.status, await hook.clone().text()).toBe(201);
    receiver.secret = (await hook.json()).data.secret;

    const query = 'subscription($after: ID) { events(types: [PATIENT_CREATED], after: $after) { id data } }';
    // Two subscribers on each instance.
    const subscribers = instances.flatMap((instance, at) =>
      [0, 1].map(() => {
        // The events subscription needs webhooks:manage: the clinic-writes key's, not the reading one's.
        const socket = connect(instance.url, { Authorization: `Bearer ${writer}` });
        sockets.push(socket);
        return { at, socket, sub: socket.subscribe(query), seen: [] as any[] };
      }),
    );
    const create = async (url: string, name: string) => {
      const r = await fetch(`${url}/v1/patients`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${writer}` },
        body: JSON.stringify({ first_name: name, last_name: 'Cluster' }),
      });
      expect(r.status, await r.clone().text()).toBe(201);
      return (await r.json()).data.id as string;
    };
    // Subscribed once a probe reached every one (a subscription registers after its socket opens).
    const probes: string[] = [];
    const deadline = Date.now() + 30_000;
    while (!subscribers.every((s) => s.sub.results.length > 0)) {
      if (Date.now() > deadline) throw new Error('the subscriptions never received a probe');
      probes.push(await create(instances[0].url, 'Probe'));
      await new Promise((r) => setTimeout(r, 200));
    }
    const created: string[] = [];
    const killed = instances[2];
    for (let i = 0; i < WRITES; i++) {
      if (i === WRITES / 2) {
        const exited = new Promise((resolve) => killed.child.once('exit', resolve));
        killed.child.kill('SIGKILL');
        await exited;
      }
      const alive = i < WRITES / 2 ? instances : instances.slice(0, 2);
      created.push(await create(alive[i % alive.length].url, `C${i}`));
    }
    // The killed instance's subscribers resume on another instance after the last id they saw.
    for (const s of subscribers.filter((x) => x.at === 2)) {
      const closed = await s.socket.closed;
      expect(closed.code).not.toBe(4403);
      s.seen = s.sub.results.slice();
      const last = s.seen.at(-1)?.events.id;
      const socket = connect(instances[0].url, { Authorization: `Bearer ${writer}` });
      sockets.push(socket);
      s.sub = socket.subscribe(query, { after: last });
    }
    const everything = [...probes, ...created];
    await Promise.all(
      subscribers.map(async (s) => {
        const expected = everything.length - (s.sub.results.length === 0 ? 0 : 0);
        const until = Date.now() + 30_000;
        while ([...s.seen, ...s.sub.results].length < expected && Date.now() < until)
          await new Promise((r) => setTimeout(r, 50));
      }),
    );
    await new Promise((r) => setTimeout(r, 500));
    for (const s of subscribers) {
      const got = [...s.seen, ...s.sub.results];
      expect(s.sub.errors).toEqual([]);
      // Every patient once, in commit order (ids ascending), from its first probe on.
      const ids = got.map((r) => r.events.data.id);
      expect(ids).toEqual(everything.slice(everything.indexOf(ids[0])));
      const eventIds = got.map((r) => Number(String(r.events.id).replace(/\D/g, '')));
      expect(eventIds).toEqual([...new Set(eventIds)].sort((a, b) => a - b));
    }

    // Deliveries: every event at least once; duplicates counted; never more than 4 at once.
    await receiver.waitFor(everything.length, 60_000);
    const delivered = new Set(receiver.accepted.map((a) => a.body.data.id));
    for (const id of everything) expect(delivered.has(id), id).toBe(true);
    const duplicates = receiver.arrivals.length - receiver.accepted.length;
    console.log(
      `cluster: ${everything.length} events, ${receiver.arrivals.length} deliveries, ${duplicates} duplicates (${((100 * duplicates) / everything.length).toFixed(1)} %), at most ${receiver.maxInFlight} at once`,
    );
    expect(receiver.maxInFlight).toBeLessThanOrEqual(4);

    // Sweeps: one job a period for the whole cluster, though five processes ask for each every
    // period. Watched over at least SWEEP_PERIODS periods, however fast the rest went.
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const count = () =>
        client.query<{ name: string; n: string; first: Date; last: Date }>(
          `select name, count(*) as n, min(created_on) as first, max(created_on) as last from pgboss.job
            where name like 'sweep.%' and created_on >= $1 group by name order by name`,
          [startedAt],
        );
      const spanOf = (r: { first: Date; last: Date }) => (r.last.getTime() - r.first.getTime()) / 1000;
      const until = Date.now() + (SWEEP_PERIODS + 3) * SWEEP_SECONDS * 1000;
      let rows = (await count()).rows;
      while (
        (rows.length < 2 || rows.some((r) => spanOf(r) < (SWEEP_PERIODS - 1) * SWEEP_SECONDS)) &&
        Date.now() < until
      ) {
        await new Promise((r) => setTimeout(r, 500));
        rows = (await count()).rows;
      }
      expect(rows.map((r) => r.name)).toEqual(['sweep.event-retention', 'sweep.media-orphans']);
      for (const r of rows) {
        const span = spanOf(r);
        const periods = Math.round(span / SWEEP_SECONDS) + 1;
        console.log(`cluster: ${r.name} ran ${r.n} times in ${span.toFixed(0)} s (${periods} periods)`);
        expect(periods).toBeGreaterThanOrEqual(SWEEP_PERIODS);
        // Once a period: N processes asking would make up to N jobs a period.
        expect(Number(r.n)).toBeGreaterThanOrEqual(periods - 1);
        expect(Number(r.n)).toBeLessThanOrEqual(periods + 1);
      }
    } finally {
      await client.end();
    }
  });
});
