/**
 * `npm run bench:deliveries`: webhook deliveries per second, and the time from an event's commit
 * to its first attempt's arrival at the receiver (issue 17, Delivery).
 *
 *   1. A database of its own, `cg_deliveries_<pid>` on DATABASE_URL's server (else
 *      postgresql://postgres@127.0.0.1:5432), created and migrated; dropped at the end.
 *   2. A receiver in this process (node:http on loopback, answers 204), and the service as a child
 *      process (bench/delivery-server.ts: `npm start`'s server with its workers, loopback allowed).
 *   3. --subscriptions subscriptions of one clinic to patient.created, made over POST /v1/webhooks,
 *      each with its own receiver path.
 *   4. Events recorded from this process through the unit of work (src/services/unit-of-work.ts:
 *      the outbox row and its delivery jobs in one transaction), as a write records them, without
 *      the HTTP request around it, so what is measured is delivery. An event's commit time is when
 *      its transaction's COMMIT answered; latency is from it to the delivery's arrival.
 *   5. Steady: --rate deliveries a second (events at rate / subscriptions a second) for --seconds;
 *      below capacity, its p99 is the delivery path's own. Burst: --events events at once (events
 *      × subscriptions deliveries), --per-write events a write, from --writers concurrent writers;
 *      its p99 is queueing.
 *   6. A worker killed (issue 25): the same burst with a second worker process (`npm run worker`)
 *      beside the service, SIGKILLed once a third of the burst has arrived. Deliveries/s counts
 *      every delivery but the attempts the dead worker had in flight (pg-boss's heartbeat gives
 *      those back, 30 s + up to 60 s of supervision; the bench waits for them and reports when the
 *      last came); "longest stall" is the longest any subscription went without a delivery from
 *      the kill until its last burst delivery, those in flight aside (its slots must not stay with
 *      the dead worker).
 *   7. --workers=N (issue 35: "through the pooler, the delivery burst stays at or above 2,000/s with
 *      two workers"): N `npm run worker` processes (src/worker.ts) started before the warm-up and
 *      running through the steady and burst runs, and the service with ROLES=http,sends,sweeps (its delivery
 *      workers off; it still serves the webhooks API and takes the cluster's sweeps). Off, so that
 *      exactly N processes deliver: the deployment docs/scale.md describes (instances without deliveries,
 *      M workers), and a figure "with two workers" that is two workers', not two workers' plus the
 *      service's. The killed-worker run then adds its worker beside those N. --workers=0 (the
 *      default): the service's own workers deliver, as before issue 35.
 *   8. --pooler: PgBouncer in transaction mode (bench/pgbouncer.ts) in front of the database; the
 *      service, the workers and this process's writes (and its queue) have DATABASE_URL through it
 *      and DATABASE_SESSION_URL direct (src/lib/session-url.ts), as docs/scale.md deploys them.
 *      With --pooler or --workers, every process gets one ROOT_SECRET (src/lib/secrets.ts). Without
 *      either flag, everything runs as before issue 35 (direct, the service's own workers).
 * Prints whether the pooler was used and which processes delivered; under --pooler, also the
 * transactions PgBouncer passed and the server connections it holds open at the end.
 *
 * Options: --subscriptions=20 --events=250 --writers=4 --per-write=25 --rate=200 --seconds=10 --runs=1
 *          --kill (default on; --no-kill skips the killed-worker run)
 *          --workers=0 (`npm run worker` processes delivering; above 0 the service has no deliveries role)
 *          --pooler  --pool-size=20 (PgBouncer's default_pool_size)
 *          --cpu-prof (profile the service; writes bench/.profiles/*.cpuprofile)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createApiKey } from '../src/auth/keys.ts';
import { openOrm } from '../src/db/orm.ts';
import { ensureDatabase, migrate } from '../src/lib/database.ts';
import { startJobs } from '../src/server/jobs.ts';
import { createClinic } from '../src/services/clinics/clinics.ts';
import { clinicWrite } from '../src/services/unit-of-work.ts';
import type { ChildMessage } from './child.ts';
import { benchPooler, poolerLine } from './pgbouncer.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values: opts } = parseArgs({
  options: {
    subscriptions: { type: 'string', default: '20' },
    events: { type: 'string', default: '250' },
    writers: { type: 'string', default: '4' },
    'per-write': { type: 'string', default: '25' },
    rate: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '10' },
    runs: { type: 'string', default: '1' },
    kill: { type: 'boolean', default: true },
    workers: { type: 'string', default: '0' },
    pooler: { type: 'boolean', default: false },
    'pool-size': { type: 'string', default: '20' },
    'cpu-prof': { type: 'boolean', default: false },
  },
  allowNegative: true,
});
const SUBS = Number(opts.subscriptions);
const BURST_EVENTS = Number(opts.events);
const WRITERS = Number(opts.writers);
const PER_WRITE = Number(opts['per-write']);
const RATE = Number(opts.rate);
const SECONDS = Number(opts.seconds);
const RUNS = Number(opts.runs);
const WORKERS = Number(opts.workers);
const POOL_SIZE = Number(opts['pool-size']);
if (!(WORKERS >= 0)) throw new Error(`--workers=${opts.workers}: 0 or more`);

const adminUrl = new URL(process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres');
adminUrl.pathname = '/postgres';
const dbName = `cg_deliveries_${process.pid}`;
const dbUrl = new URL(adminUrl);
dbUrl.pathname = `/${dbName}`;

// The receiver: each delivery's first arrival, by event sequence number and subscription path.
const arrivals = new Map<string, number>();
let duplicates = 0;
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = performance.now();
    const seq = JSON.parse(Buffer.concat(chunks).toString('utf8')).data.seq as number;
    const key = `${seq}${req.url}`;
    if (arrivals.has(key)) duplicates++;
    else arrivals.set(key, at);
    res.writeHead(204).end();
  });
});
receiver.keepAliveTimeout = 30_000;
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverPort = (receiver.address() as AddressInfo).port;

await ensureDatabase(adminUrl.toString(), dbName);
const pooler = await benchPooler(opts.pooler, dbUrl.toString(), POOL_SIZE);
// What the service, the workers and this process's writes connect to: PgBouncer under --pooler.
const poolUrl = pooler ? pooler.through(dbUrl.toString()) : dbUrl.toString();
const several = pooler !== null || WORKERS > 0;
const rootSecret = `deliveries-bench-root-secret-${process.pid}-0123456789abcdef`;
/** A worker process's environment (src/worker.ts reads its configuration as `npm run worker` does). */
const workerEnv = {
  ...process.env,
  DATABASE_URL: poolUrl,
  ...(pooler ? { DATABASE_SESSION_URL: dbUrl.toString() } : {}),
  ...(several ? { ROOT_SECRET: rootSecret } : {}),
  LOG_LEVEL: 'warn',
};
const orm = await openOrm(poolUrl, {
  requestTimeouts: false,
  ...(pooler ? { sessionUrl: dbUrl.toString() } : {}),
});
let child: ChildProcess | undefined;
const workers: ChildProcess[] = [];
process.on('exit', () => {
  for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
});
/** `npm run worker` as a child, once it says it is ready. */
async function startWorker(): Promise<ChildProcess> {
  const worker = spawn(process.execPath, [path.join(here, '..', 'src', 'worker.ts')], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: workerEnv,
  });
  workers.push(worker);
  await new Promise<void>((resolve, reject) => {
    worker.once('exit', (code) => reject(new Error(`worker exited (code ${code})`)));
    worker.once('message', () => resolve());
  });
  return worker;
}
let jobs: Awaited<ReturnType<typeof startJobs>> | undefined;
try {
  await migrate(orm);
  const clinic = await createClinic(orm.em.fork(), {
    name: 'Deliveries bench',
    kind: 'dental',
    mode: 'test',
    country: 'IL',
    phone: '+97235550199',
  });
  const { key } = await createApiKey(orm.em.fork(), {
    clinicId: clinic.id,
    name: 'deliveries bench',
    scopes: ['webhooks:manage'],
  });

  const profile = opts['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${path.join(here, '.profiles')}`] : [];
  child = spawn(process.execPath, [...profile, path.join(here, 'delivery-server.ts')], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: {
      ...process.env,
      BENCH_DATABASE_URL: poolUrl,
      ...(pooler ? { BENCH_DATABASE_SESSION_URL: dbUrl.toString() } : {}),
      ...(several ? { BENCH_ROOT_SECRET: rootSecret } : {}),
      ...(WORKERS > 0 ? { BENCH_WORKERS: 'off' } : {}),
      LOG_LEVEL: 'warn',
    },
  });
  const started = child;
  const url = await new Promise<string>((resolve, reject) => {
    started.once('exit', (code) => reject(new Error(`server exited (code ${code})`)));
    started.on('message', (m: ChildMessage) => m.type === 'ready' && resolve(m.url));
  });
  for (let i = 0; i < SUBS; i++) {
    const r = await fetch(`${url}/v1/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        url: `http://127.0.0.1:${receiverPort}/s/${i}`,
        event_types: ['patient.created'],
      }),
    });
    if (r.status !== 201) throw new Error(`POST /v1/webhooks: ${r.status} ${await r.text()}`);
  }
  // This process writes events: the queue attached (no workers here), as the CLI has it.
  jobs = await startJobs({ orm });
  for (let i = 0; i < WORKERS; i++) await startWorker();

  const committed = new Map<number, number>();
  let seq = 0;
  /** One write recording `count` events (outbox rows and their deliveries' jobs), timed to its commit. */
  async function emit(count = 1): Promise<void> {
    const numbers = Array.from({ length: count }, () => ++seq);
    const clinicOf = { id: clinic.id, kind: 'dental' as const, country: 'IL', mode: clinic.mode };
    await clinicWrite(orm.em.fork(), clinicOf, new Date(), async (w) => {
      for (const n of numbers)
        w.record({
          type: 'patient.created',
          scope: 'patients:read',
          data: async () => ({ id: `pat_bench_${n}`, seq: n, first_name: 'Bench', last_name: `Event ${n}` }),
        });
    });
    const at = performance.now();
    for (const n of numbers) committed.set(n, at);
  }

  /** Waits until every delivery of events `from`..`to` has arrived; answers their latencies. */
  async function collect(from: number, to: number, timeoutMs = 120_000) {
    const end = Date.now() + timeoutMs;
    const expected = (to - from + 1) * SUBS;
    for (;;) {
      let got = 0;
      for (let n = from; n <= to; n++) for (let s = 0; s < SUBS; s++) if (arrivals.has(`${n}/s/${s}`)) got++;
      if (got === expected) break;
      if (Date.now() > end) throw new Error(`${got} of ${expected} deliveries after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 25));
    }
    const latencies: number[] = [];
    let last = 0;
    for (let n = from; n <= to; n++)
      for (let s = 0; s < SUBS; s++) {
        const at = arrivals.get(`${n}/s/${s}`) as number;
        latencies.push(at - (committed.get(n) as number));
        last = Math.max(last, at);
      }
    return { latencies: latencies.sort((a, b) => a - b), last };
  }

  const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
  const ms = (x: number) => `${x.toFixed(1)} ms`;

  // Warm-up: connections, statement plans, the JIT.
  for (let i = 0; i < 20; i++) await emit();
  await collect(1, seq);

  const rows: Record<string, Record<string, string>> = {};
  for (let run = 1; run <= RUNS; run++) {
    // Steady: events at RATE / SUBS a second, for SECONDS.
    const gap = (1000 * SUBS) / RATE;
    const steadyFrom = seq + 1;
    const t0 = performance.now();
    const pending: Promise<void>[] = [];
    for (let i = 0; i < Math.round((SECONDS * 1000) / gap); i++) {
      const due = t0 + i * gap;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      pending.push(emit());
    }
    await Promise.all(pending);
    const steady = await collect(steadyFrom, seq);
    rows[`steady ${RATE}/s #${run}`] = {
      deliveries: String(steady.latencies.length),
      'deliveries/s': ((steady.latencies.length * 1000) / (steady.last - t0)).toFixed(0),
      p50: ms(pct(steady.latencies, 50)),
      p99: ms(pct(steady.latencies, 99)),
      max: ms(steady.latencies.at(-1) as number),
    };

    // Burst: BURST_EVENTS events from WRITERS concurrent writers.
    const burstFrom = seq + 1;
    const b0 = performance.now();
    let left = BURST_EVENTS;
    await Promise.all(
      Array.from({ length: WRITERS }, async () => {
        while (left > 0) {
          const count = Math.min(PER_WRITE, left);
          left -= count;
          await emit(count);
        }
      }),
    );
    const written = performance.now();
    const burst = await collect(burstFrom, seq);
    rows[`burst ${BURST_EVENTS}×${SUBS} #${run}`] = {
      deliveries: String(burst.latencies.length),
      'deliveries/s': ((burst.latencies.length * 1000) / (burst.last - b0)).toFixed(0),
      p50: ms(pct(burst.latencies, 50)),
      p99: ms(pct(burst.latencies, 99)),
      max: ms(burst.latencies.at(-1) as number),
      'events written in': ms(written - b0),
    };
  }

  if (opts.kill) {
    // A second worker process beside the service's own workers, killed a third of the way in.
    const worker = await startWorker();
    const from = seq + 1;
    const expected = BURST_EVENTS * SUBS;
    const arrivedOf = () => {
      let got = 0;
      for (let n = from; n <= seq; n++) for (let s = 0; s < SUBS; s++) if (arrivals.has(`${n}/s/${s}`)) got++;
      return got;
    };
    const k0 = performance.now();
    let left = BURST_EVENTS;
    const writing = Promise.all(
      Array.from({ length: WRITERS }, async () => {
        while (left > 0) {
          const count = Math.min(PER_WRITE, left);
          left -= count;
          await emit(count);
        }
      }),
    );
    while (arrivedOf() < expected / 3) await new Promise((r) => setTimeout(r, 5));
    worker.kill('SIGKILL');
    const killedAt = performance.now();
    await writing;
    const all = await collect(from, seq, 180_000);
    // The dead worker's attempts in flight come back with the heartbeat, long after the rest.
    const cut = (pct(all.latencies, 50) as number) + 10_000;
    const onTime: number[] = [];
    const late: number[] = [];
    let lastOnTime = 0;
    const onTimeBySub = new Map<number, number[]>();
    for (let n = from; n <= seq; n++)
      for (let s = 0; s < SUBS; s++) {
        const at = arrivals.get(`${n}/s/${s}`) as number;
        const latency = at - (committed.get(n) as number);
        if (latency > cut) {
          late.push(latency);
          continue;
        }
        onTime.push(latency);
        lastOnTime = Math.max(lastOnTime, at);
        onTimeBySub.set(s, [...(onTimeBySub.get(s) ?? []), at]);
      }
    onTime.sort((a, b) => a - b);
    late.sort((a, b) => a - b);
    // Per subscription: the longest gap between its deliveries from the kill to its last one.
    let stall = 0;
    for (const times of onTimeBySub.values()) {
      let prev = killedAt;
      for (const t of times.filter((x) => x >= killedAt).sort((a, b) => a - b)) {
        stall = Math.max(stall, t - prev);
        prev = t;
      }
    }
    rows[`burst ${BURST_EVENTS}×${SUBS}, a worker killed`] = {
      deliveries: `${onTime.length} + ${late.length} in flight at the kill`,
      'deliveries/s': ((onTime.length * 1000) / (lastOnTime - k0)).toFixed(0),
      p50: ms(pct(onTime, 50)),
      p99: ms(pct(onTime, 99)),
      max: late.length ? `${ms(late.at(-1) as number)} (in flight)` : ms(onTime.at(-1) as number),
      'longest stall': ms(stall),
    };
  }

  console.log(
    `\nwebhook deliveries: ${SUBS} subscriptions, receiver on loopback answering 204; ${os.cpus().length} CPUs, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log(poolerLine(pooler, POOL_SIZE));
  console.log(
    WORKERS > 0
      ? `delivering: ${WORKERS} \`npm run worker\` process${WORKERS > 1 ? 'es' : ''} (src/worker.ts), the service without the deliveries role${opts.kill ? '; the killed-worker run adds one more' : ''}`
      : `delivering: the service's own workers (WORKERS=on)${opts.kill ? '; the killed-worker run adds one `npm run worker`' : ''}`,
  );
  console.table(rows);
  if (duplicates) console.log(`${duplicates} duplicate deliveries (at least once: allowed, counted once)`);
  if (pooler) {
    const st = await pooler.stats(dbName);
    console.log(
      `through PgBouncer: ${st.transactions} transactions since it started, ${st.serverConnections} server connections open now for ${st.clients} clients`,
    );
  }
} finally {
  await jobs?.stop(0);
  child?.kill('SIGTERM');
  if (child && child.exitCode === null) await new Promise((r) => child?.once('exit', r));
  await Promise.all(
    workers
      .filter((w) => w.exitCode === null && w.signalCode === null)
      .map((w) => {
        const exited = new Promise((r) => w.once('exit', r));
        w.kill('SIGTERM');
        return exited;
      }),
  );
  await orm.close();
  receiver.closeAllConnections();
  receiver.close();
  const admin = new pg.Client({ connectionString: adminUrl.toString() });
  await admin.connect();
  await admin.query(`drop database if exists "${dbName}" with (force)`);
  await admin.end();
  await pooler?.close();
}
