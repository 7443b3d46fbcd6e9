/**
 * `npm run bench:fanout`: one event fanned out to many websocket subscribers.
 *
 *   1. Database `cg_fanout` on DATABASE_URL's server (else postgresql://postgres@127.0.0.1:5432),
 *      created and migrated if missing; a clinic and a webhooks:manage key of the bench's own.
 *   2. The app as --instances child processes (bench/server.ts, as `npm run bench` runs it; with
 *      more than one, all with one ROOT_SECRET, as several instances must have), each one's live
 *      heap and RSS read over IPC after a full collection, before and after the sockets connect.
 *   3. --sockets graphql-ws connections from this process (the graphql-transport-ws protocol over
 *      bare sockets: a receipt is timed on arrival, only its event id read), socket i on instance
 *      i mod --instances, each subscribed to `events(types: ["patient.created"])`; a first event
 *      checks every one receives it.
 *   4. --events events, one at a time: each is INSERTed into the outbox (autocommit, the way a
 *      write's transaction commits it) and timed from the moment the INSERT is sent (an upper
 *      bound of its commit) to each subscriber's receipt, whichever instance it is on.
 *   5. --pooler: PgBouncer in transaction mode (bench/pgbouncer.ts) in front of the database; the
 *      instances' DATABASE_URL and this process's INSERTs go through it, their LISTEN
 *      (DATABASE_SESSION_URL) direct, as docs/scale.md deploys them. Without it, all direct (the
 *      figures before issue 35).
 * Prints whether the pooler was used, p50/p99/max over every receipt, and the memory per idle
 * socket (the instances' delta summed / sockets); under --pooler, the transactions PgBouncer
 * passed and the server connections it holds open at the end.
 *
 * Options: --sockets=1000  --events=20  --gap=100 (ms between events)
 *          --instances=1 (service processes; the sockets spread round-robin over them)
 *          --pooler  --pool-size=20 (PgBouncer's default_pool_size)
 *          --cpu-prof (profile the servers; writes bench/.profiles/*.cpuprofile)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import WebSocket from 'ws';
import { createApiKey } from '../src/auth/keys.ts';
import { openOrm } from '../src/db/orm.ts';
import { ensureDatabase, migrate } from '../src/lib/database.ts';
import { createClinic } from '../src/services/clinics/clinics.ts';
import type { ChildMessage, MemoryReport } from './child.ts';
import { benchPooler, poolerLine } from './pgbouncer.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values: opts } = parseArgs({
  options: {
    sockets: { type: 'string', default: '1000' },
    events: { type: 'string', default: '20' },
    gap: { type: 'string', default: '100' },
    instances: { type: 'string', default: '1' },
    pooler: { type: 'boolean', default: false },
    'pool-size': { type: 'string', default: '20' },
    'cpu-prof': { type: 'boolean', default: false },
  },
});
const SOCKETS = Number(opts.sockets);
const EVENTS = Number(opts.events);
const GAP_MS = Number(opts.gap);
const INSTANCES = Number(opts.instances);
const POOL_SIZE = Number(opts['pool-size']);
if (!(INSTANCES >= 1)) throw new Error(`--instances=${opts.instances}: at least 1`);

const adminUrl = new URL(process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres');
adminUrl.pathname = '/postgres';
const dbUrl = new URL(adminUrl);
dbUrl.pathname = '/cg_fanout';

await ensureDatabase(adminUrl.toString(), 'cg_fanout');
const orm = await openOrm(dbUrl.toString(), { requestTimeouts: false });
await migrate(orm);
const clinic = await createClinic(orm.em.fork(), {
  name: `Fan-out ${Date.now()}`,
  kind: 'dental',
  mode: 'test',
  country: 'IL',
  phone: `+9723${String(Date.now()).slice(-7)}`,
});
const { key } = await createApiKey(orm.em.fork(), {
  clinicId: clinic.id,
  name: 'fanout',
  scopes: ['webhooks:manage'],
});
await orm.close();

const pooler = await benchPooler(opts.pooler, dbUrl.toString(), POOL_SIZE);
// What the instances and this process's writes connect to: PgBouncer under --pooler, else direct.
const writeUrl = pooler ? pooler.through(dbUrl.toString()) : dbUrl.toString();
const profile = opts['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${path.join(here, '.profiles')}`] : [];
// Several service processes on one database must share their secrets (src/lib/secrets.ts).
const rootSecret = `fanout-bench-root-secret-${process.pid}-0123456789abcdef`;
const children: ChildProcess[] = [];
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});
async function startInstance(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--expose-gc', ...profile, path.join(here, 'server.ts')], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: {
      ...process.env,
      BENCH_DATABASE_URL: writeUrl,
      ...(pooler ? { BENCH_DATABASE_SESSION_URL: dbUrl.toString() } : {}),
      ...(INSTANCES > 1 ? { BENCH_ROOT_SECRET: rootSecret } : {}),
      LOG_LEVEL: 'warn',
    },
  });
  children.push(child);
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`server exited (code ${code})`)));
    child.on('message', (m: ChildMessage) => m.type === 'ready' && resolve(m.url));
  });
  return { child, url };
}
// One after another: each proves at start its event path, and that its secrets agree with those of
// the instances already up (src/server/prove-connections.ts).
const instances: { child: ChildProcess; url: string }[] = [];
for (let i = 0; i < INSTANCES; i++) instances.push(await startInstance());
const memoryOf = (child: ChildProcess) =>
  new Promise<MemoryReport>((resolve) => {
    const on = (m: ChildMessage) => {
      if (m.type !== 'memory' || !('rss' in m)) return;
      child.off('message', on);
      resolve(m);
    };
    child.on('message', on);
    child.send({ type: 'memory', gc: true });
  });
/** The instances' memory, summed. */
const memory = async () => {
  const each = await Promise.all(instances.map((i) => memoryOf(i.child)));
  const sum = (k: 'rss' | 'heapUsed' | 'heapTotal' | 'external') => each.reduce((n, m) => n + m[k], 0);
  const total: MemoryReport = {
    type: 'memory',
    rss: sum('rss'),
    heapUsed: sum('heapUsed'),
    heapTotal: sum('heapTotal'),
    external: sum('external'),
  };
  return total;
};

const before = await memory();
const sentAt = new Map<string, number>();
const latencies: number[] = [];
const received = new Map<string, number>();
const clients: WebSocket[] = [];
let ready = 0;
const EVENT_ID = /"id":"(pat_bench_\d+)"/;
// Each subscriber speaks graphql-ws's protocol (graphql-transport-ws) over a bare socket and times a
// message on arrival, reading only the event id out of it: 1,000 full graphql-ws clients in this
// one process took longer to parse what arrived than the server took to send it, and the receipts
// measured this process's queue more than the service.
for (let i = 0; i < SOCKETS; i++) {
  const { url } = instances[i % INSTANCES];
  const socket = new WebSocket(`${url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
  socket.on('open', () =>
    socket.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: `Bearer ${key}` } })),
  );
  socket.on('message', (raw: Buffer) => {
    const at = performance.now();
    const text = raw.toString();
    const id = EVENT_ID.exec(text)?.[1];
    if (id) {
      const t = sentAt.get(id);
      if (t !== undefined) latencies.push(at - t);
      received.set(id, (received.get(id) ?? 0) + 1);
      return;
    }
    const message = JSON.parse(text) as { type: string; payload?: unknown };
    if (message.type === 'connection_ack') {
      ready++;
      socket.send(
        JSON.stringify({
          id: '1',
          type: 'subscribe',
          payload: { query: 'subscription { events(types: [PATIENT_CREATED]) { id data } }' },
        }),
      );
    } else if (message.type === 'ping') socket.send('{"type":"pong"}');
    else if (message.type !== 'pong') console.error('subscription message', text);
  });
  socket.on('error', (e) => console.error('socket error', e));
  clients.push(socket);
}
while (ready < SOCKETS) await new Promise((r) => setTimeout(r, 20));

const db = new pg.Client({ connectionString: writeUrl });
await db.connect();
async function emit(n: number, timed = true): Promise<string> {
  const id = `pat_bench_${n}`;
  const t = performance.now();
  if (timed) sentAt.set(id, t);
  await db.query(
    `insert into "event" ("clinic_id", "type", "scope", "data", "created_at") values ($1, 'patient.created', 'patients:read', $2, now())`,
    [clinic.id, JSON.stringify({ id, first_name: 'Fan', last_name: 'Out' })],
  );
  return id;
}

// Every socket subscribed: a first event reaches all of them (not timed).
// Never in sentAt: taken out only once its INSERT answered, receipts that came first (through the
// pooler, half the sockets' did: the NOTIFY's path is direct) were timed with the events.
const first = await emit(0, false);
const deadline = Date.now() + 10_000;
while ((received.get(first) ?? 0) < SOCKETS && Date.now() < deadline)
  await new Promise((r) => setTimeout(r, 20));
const subscribed = received.get(first) ?? 0;
const idle = await memory();

for (let n = 1; n <= EVENTS; n++) {
  await emit(n);
  await new Promise((r) => setTimeout(r, GAP_MS));
}
await new Promise((r) => setTimeout(r, 1000));

latencies.sort((a, b) => a - b);
const pct = (p: number) =>
  latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? NaN;
const expected = SOCKETS * EVENTS;
const dupes = [...received.values()].filter((c) => c > SOCKETS).length;
const mb = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MB`;
const kb = (b: number) => `${(b / 1024).toFixed(1)} KB`;
console.log(
  `\nfan-out: ${SOCKETS} sockets, ${EVENTS} events ${GAP_MS} ms apart (server: bench/server.ts${
    INSTANCES > 1 ? ` × ${INSTANCES} instances, sockets round-robin, memory summed over them` : ''
  })`,
);
console.log(poolerLine(pooler, POOL_SIZE));
console.table({
  'subscribed (first event reached)': `${subscribed} / ${SOCKETS}`,
  'receipts (timed)': `${latencies.length} / ${expected}${dupes ? `, ${dupes} events duplicated` : ''}`,
  'p50 commit → receipt': `${pct(50).toFixed(1)} ms`,
  'p99 commit → receipt': `${pct(99).toFixed(1)} ms`,
  'max commit → receipt': `${(latencies[latencies.length - 1] ?? NaN).toFixed(1)} ms`,
  'server RSS before → idle sockets': `${mb(before.rss)} → ${mb(idle.rss)}`,
  'RSS per idle socket': kb((idle.rss - before.rss) / SOCKETS),
  'live heap per idle socket': kb((idle.heapUsed - before.heapUsed) / SOCKETS),
});

if (pooler) {
  const st = await pooler.stats('cg_fanout');
  console.log(
    `through PgBouncer: ${st.transactions} transactions since it started, ${st.serverConnections} server connections open now for ${st.clients} clients`,
  );
}
await db.end();
for (const c of clients) c.close();
await Promise.all(
  instances.map(({ child }) => {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    return exited;
  }),
);
await pooler?.close();
process.exit(latencies.length === expected ? 0 : 1);
