/**
 * `npm run bench`: the patients and chat endpoints and the booking of an appointment of the real
 * app against a hand-written raw baseline.
 *
 *   1. Database `cg_bench` on DATABASE_URL's server (else postgresql://postgres@127.0.0.1:5432):
 *      created, migrated, and seeded once with one veterinary clinic of 100,000 animals (owners,
 *      species, appointments) and an API key with every read scope and appointments:write. Reruns
 *      reuse the data. For the booking case, the clinic also gets 32 providers of the bench's own
 *      ("Bench provider N"), and every run first deletes the bookings (and their events) that earlier
 *      runs made.
 *   2. Two child processes on loopback: bench/server.ts (the app: startHttpServer over MikroORM)
 *      and bench/raw-server.ts (node:http + pg). Separate processes, so the load generator does
 *      not share their event loop and the app's peak RSS (VmHWM) is its own.
 *   3. Every case is checked once on both servers (200, non-empty, same JSON), then each server
 *      gets a warm-up and a timed autocannon run with fixed concurrency, alternating app and raw.
 *      Each run also prints the CPU per request of the server process and of PostgreSQL.
 *   4. The booking case (POST /v1/appointments: the appointment and its appointment.created event
 *      in one transaction) sends a new slot with every request, so every one is a 201: request n
 *      books provider n mod 32 at 2100-01-01 plus (n div 32) slots of the type's duration, n
 *      counting up over the whole run (both servers, warm-ups included), so no two bookings ever
 *      overlap. Its check compares the two answers but for ids and times, and reads both event
 *      rows back: each one's `data` must be its server's answer.
 *
 * Options: --cases=list,search,phone,graphql,chat-messages,chat-conversations,chat-sync,booking  --rounds=3  --duration=5  --warmup=2  --connections=32
 *          --patients=100000  --cpu-prof (profile the app server; writes bench/.profiles/*.cpuprofile)
 *          --cpu-prof-raw (with --cpu-prof: the raw server as well)
 *          --app-flags="--max-semi-space-size=64"  (node flags for the app server, replacing the ones
 *          of `npm start`, which it runs with by default)
 *          --live-heap (report the live heap under load: one forced full GC half-way through each run)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import type { EntityManager } from '@mikro-orm/postgresql';
import autocannon, { type Result } from 'autocannon';
import pg from 'pg';
import { createApiKey } from '../src/auth/keys.ts';
import { readScopes } from '../src/auth/scopes.ts';
import { seedPatients } from '../src/demo/seed-patients.ts';
import { Clinic, Provider } from '../src/entities/index.ts';
import { ensureDatabase, migrate, openOrm } from '../src/lib/database.ts';
import { toLocal } from '../src/lib/phone.ts';
import { createClinic } from '../src/services/clinics/clinics.ts';
import { prepareChat } from './chat-data.ts';
import type { ChildMessage, MemoryReport } from './child.ts';

const here = path.dirname(fileURLToPath(import.meta.url));

const { values: opts } = parseArgs({
  options: {
    cases: {
      type: 'string',
      default: 'list,search,phone,graphql,chat-messages,chat-conversations,chat-sync,booking',
    },
    /** Timed runs per case and server, alternating app and raw; the report takes medians. */
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '32' },
    patients: { type: 'string', default: '100000' },
    'cpu-prof': { type: 'boolean', default: false },
    /** With --cpu-prof: profile the raw server too (compare where each spends a request). */
    'cpu-prof-raw': { type: 'boolean', default: false },
    /** Node flags for the app server instead of those of `npm start`, e.g. "--max-semi-space-size=64". */
    'app-flags': { type: 'string' },
    /** Force one full GC half-way through each run to report the live heap (perturbs V8's heap sizing). */
    'live-heap': { type: 'boolean', default: false },
  },
});
const ROUNDS = Number(opts.rounds);
const DURATION = Number(opts.duration);
const WARMUP = Number(opts.warmup);
const CONNECTIONS = Number(opts.connections);
const PATIENTS = Number(opts.patients);
const CLINIC_NAME = 'Bench Veterinary';
const DB_NAME = 'cg_bench';
/** Everything after seeding must finish within this, or the run is aborted (children killed). */
const RUN_BUDGET_MS = 480_000;
const RSS_TARGET_MB = 300;
/** The booking case's providers: as many as the default connections, so requests rarely queue on one provider's lock. */
const BENCH_PROVIDERS = 32;
/** Marks the bench's bookings (and, in their `data`, their events), so each run deletes the last run's. */
const BOOKING_NOTE = 'bench booking';
/** The bench's bookings start here and later: no seeded appointment is that far ahead. */
const BOOKING_BASE_MS = Date.UTC(2100, 0, 1);

// ---------- children: always killed, whatever happens ----------

const children = new Set<ChildProcess>();

function killChildren() {
  for (const c of children) {
    if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
  }
}
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    killChildren();
    process.exit(130);
  });
}

interface Server {
  name: 'app' | 'raw';
  url: string;
  child: ChildProcess;
  /** Peak and current resident set size in bytes, from /proc/<pid>/status. */
  rss(): { peak: number; now: number };
  /** The child's process.memoryUsage(), over IPC. */
  memory(gc?: boolean): Promise<MemoryReport>;
  stop(): Promise<void>;
}

async function startServer(
  name: 'app' | 'raw',
  databaseUrl: string,
  extra: { cpuProfDir?: string; flags?: string[] } = {},
): Promise<Server> {
  const file = path.join(here, name === 'app' ? 'server.ts' : 'raw-server.ts');
  const flags = ['--disable-warning=ExperimentalWarning', '--expose-gc', ...(extra.flags ?? [])];
  if (extra.cpuProfDir) flags.push('--cpu-prof', `--cpu-prof-dir=${extra.cpuProfDir}`);
  const child = spawn(process.execPath, [...flags, file], {
    // The app logs a line per request to stdout, as in production; it goes to /dev/null here.
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: { ...process.env, BENCH_DATABASE_URL: databaseUrl, LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' },
  });
  children.add(child);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} server did not start within 30 s`)), 30_000);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} server exited during startup (code ${code}, signal ${signal})`));
    });
    child.on('message', (m: ChildMessage) => {
      if (m.type === 'ready') {
        clearTimeout(timer);
        resolve(m.url);
      }
    });
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    name,
    url,
    child,
    rss() {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const kb = (key: string) =>
        Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
      return { peak: kb('VmHWM'), now: kb('VmRSS') };
    },
    memory(gc = false) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${name} server did not report its memory`)), 5000);
        const on = (m: ChildMessage) => {
          if (m.type !== 'memory' || !('rss' in m)) return;
          clearTimeout(timer);
          child.off('message', on);
          resolve(m);
        };
        child.on('message', on);
        const ask: ChildMessage = { type: 'memory', gc };
        child.send(ask);
      });
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
      children.delete(child);
    },
  };
}

/** The node flags `npm start` runs the app with (package.json), so the bench measures the same. */
function startFlags(): string {
  const pkg = JSON.parse(readFileSync(path.join(here, '..', 'package.json'), 'utf8'));
  const start: string = pkg.scripts.start;
  return start
    .split(/\s+/)
    .filter((t) => t.startsWith('--'))
    .join(' ');
}

// ---------- database ----------

function databaseUrls(): { admin: string; bench: string } {
  const base = new URL(process.env.DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432');
  const admin = new URL(base);
  admin.pathname = '/postgres';
  const bench = new URL(base);
  bench.pathname = `/${DB_NAME}`;
  return { admin: admin.toString(), bench: bench.toString() };
}

interface Dataset {
  clinicId: number;
  key: string;
  patients: number;
  owners: number;
  appointments: number;
  namePrefix: string;
  nameMatches: number;
  phone: string;
  phoneMatches: number;
  seededNow: boolean;
  messages: number;
  conversations: number;
  syncSince: string;
  booking: BookingRefs;
}

/** What the booking case books with: the clinic's first branch and type, its bench providers, its last patients. */
interface BookingRefs {
  branch: number;
  type: number;
  minutes: number;
  providers: number[];
  patients: number[];
}

async function prepareDatabase(benchUrl: string, adminUrl: string): Promise<Dataset> {
  await ensureDatabase(adminUrl, DB_NAME);
  const orm = await openOrm(benchUrl);
  try {
    const applied = await migrate(orm);
    if (applied.length) console.log(`migrated: ${applied.join(', ')}`);
    const em = orm.em.fork();
    let clinic = await em.findOne(Clinic, { name: CLINIC_NAME });
    clinic ??= await createClinic(em, {
      name: CLINIC_NAME,
      kind: 'veterinary',
      country: 'IL',
      timezone: 'Asia/Jerusalem',
    });
    const clinicId = clinic.id;

    const count = async () =>
      Number(
        (
          await em.execute<{ n: string }[]>('select count(*) as n from patient where clinic_id = ?', [
            clinicId,
          ])
        )[0].n,
      );
    const existing = await count();
    let seededNow = false;
    if (existing < PATIENTS) {
      const missing = PATIENTS - existing;
      console.log(
        `seeding ${missing.toLocaleString('en')} patients into clinic ${clinicId} (${existing} there)...`,
      );
      const started = Date.now();
      let lastPct = -1;
      await seedPatients(em.fork(), clinicId, missing, (done, total) => {
        const pct = Math.floor((done / total) * 10) * 10;
        if (pct !== lastPct) {
          lastPct = pct;
          console.log(
            `  ${pct}% (${done.toLocaleString('en')}/${total.toLocaleString('en')}, ${((Date.now() - started) / 1000).toFixed(0)} s)`,
          );
        }
      });
      // Fresh statistics, so the planner sees 100k rows rather than an empty table.
      await em.execute('vacuum analyze patient, owner, appointment', [], 'run');
      seededNow = true;
    }

    // One fresh key per run; the previous runs' keys go.
    await em.execute("delete from api_key where clinic_id = ? and name = 'bench'", [clinicId], 'run');
    const key = await createApiKey(em.fork(), {
      clinicId,
      name: 'bench',
      scopes: [...readScopes, 'appointments:write'],
    });
    await prepareBookings(em, clinic);
    // The clinic's messaging number, for its chat inbox (bench/chat-data.ts).

    const client = new pg.Client({ connectionString: benchUrl });
    await client.connect();
    try {
      const one = async <T>(sql: string, params: unknown[]) => (await client.query(sql, params)).rows[0] as T;
      const totals = await one<{ patients: number; owners: number; appointments: number }>(
        `select (select count(*)::int from patient where clinic_id = $1) as patients,
                (select count(*)::int from owner where clinic_id = $1) as owners,
                (select count(*)::int from appointment where clinic_id = $1) as appointments`,
        [clinicId],
      );
      // The most common 3-letter name prefix: the name search at its most expensive.
      const prefix = await one<{ p: string; n: number }>(
        `select left(name_fl, 3) as p, count(*)::int as n from patient where clinic_id = $1 and length(name_fl) >= 3
         group by 1 order by 2 desc, 1 limit 1`,
        [clinicId],
      );
      const nameMatches = await one<{ n: number }>(
        `select count(*)::int as n from patient where clinic_id = $1 and (name_fl like $2 or name_lf like $2)`,
        [clinicId, `${prefix.p}%`],
      );
      // An owner's phone from the middle of the table, asked for in local form (05x...): one with
      // two or more animals if there is one, as a phone lookup at a vet usually finds.
      const phone = await one<{ phone: string; n: number }>(
        `select phone, count(*)::int as n from patient
         where clinic_id = $1 and phone is not null
           and id >= (select (min(id) + max(id)) / 2 from patient where clinic_id = $1)
         group by phone order by (count(*) >= 2) desc, min(id) limit 1`,
        [clinicId],
      );
      const chat = await prepareChat(client, clinicId);
      return {
        clinicId,
        key: key.key,
        ...chat,
        booking: await bookingRefs(client, clinicId),
        ...totals,
        namePrefix: prefix.p,
        nameMatches: nameMatches.n,
        phone: toLocal(phone.phone, 'IL') ?? phone.phone,
        phoneMatches: phone.n,
        seededNow,
      };
    } finally {
      await client.end();
    }
  } finally {
    await orm.close();
  }
}

/**
 * The booking case's setting: the bench providers, created once; the bookings and events of
 * earlier runs deleted, so this run's never meet them (and the read cases' data stays as seeded).
 */
async function prepareBookings(em: EntityManager, clinic: Clinic) {
  const have = await em.count(Provider, { clinic, name: { $like: 'Bench provider %' } }, { filters: false });
  for (let i = have + 1; i <= BENCH_PROVIDERS; i++)
    em.create(Provider, { clinic, name: `Bench provider ${i}`, type: 'veterinarian', color: null });
  await em.flush();
  const events = await em.execute<{ affectedRows: number }>(
    `delete from event where clinic_id = ? and type = 'appointment.created' and data->>'note' = ?`,
    [clinic.id, BOOKING_NOTE],
    'run',
  );
  const bookings = await em.execute<{ affectedRows: number }>(
    'delete from appointment where clinic_id = ? and note = ?',
    [clinic.id, BOOKING_NOTE],
    'run',
  );
  if (bookings.affectedRows)
    console.log(
      `deleted the last runs' bookings: ${bookings.affectedRows} appointments, ${events.affectedRows} events`,
    );
}

async function bookingRefs(client: pg.Client, clinicId: number): Promise<BookingRefs> {
  const rows = async <T>(sql: string) => (await client.query(sql, [clinicId])).rows as T[];
  const [branch] = await rows<{ id: number }>(
    'select id from branch where clinic_id = $1 and disabled_at is null order by id limit 1',
  );
  const [type] = await rows<{ id: number; duration_minutes: number }>(
    'select id, duration_minutes from appointment_type where clinic_id = $1 and disabled_at is null order by id limit 1',
  );
  const providers = await rows<{ id: number }>(
    `select id from provider where clinic_id = $1 and name like 'Bench provider %' and disabled_at is null order by id`,
  );
  // The last animals: the GraphQL case reads the first ones' appointments.
  const patients = await rows<{ id: number }>(
    'select id from patient where clinic_id = $1 order by id desc limit 1000',
  );
  if (!branch || !type || !providers.length || !patients.length)
    throw new Error(`clinic ${clinicId} lacks a branch, an appointment type, bench providers or patients`);
  return {
    branch: branch.id,
    type: type.id,
    minutes: type.duration_minutes,
    providers: providers.map((p) => p.id),
    patients: patients.map((p) => p.id),
  };
}

// ---------- cases ----------

const GRAPHQL_QUERY =
  '{ patients(first: 25) { edges { node { id firstName lastName phone owner { id firstName } species { id name } appointments(first: 5) { edges { node { id start end status { name } } } } } } } }';

interface Case {
  id: string;
  label: string;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  /** A new body for every request, for a write that must not repeat (instead of `body`). */
  nextBody?: () => string;
  /** With `nextBody`: the body of the check's request. */
  checkBody?: () => string;
  /** The status of a correct response; 200 unless given. */
  status?: number;
  /** Minimum app/raw throughput ratio the issue sets; null where it sets none. */
  target: number | null;
  /** The number of items a correct response carries (must be > 0). */
  count(json: any): number;
  /** What of the two servers' answers must be the same; all of it unless given. */
  comparable?(json: any): unknown;
  /** Checks beyond the answers, once both servers answered; a line for the report. */
  /** Checks beyond the answers; `failed` marks the case's ratio INVALID in the report. */
  verify?(app: Checked, raw: Checked): Promise<{ failed: boolean; text: string }>;
  /** A line for the report after the timed runs. */
  summary?(): Promise<string>;
}

/** A checked response, with the body that was sent. */
interface Checked {
  json: any;
  headers: Headers;
  sent?: any;
}

/**
 * The n-th booking: a slot no other booking of the run overlaps (see the header). The check's
 * bookings (`check` 1, 2, ...) are the first provider's and patient's, in the slots just before
 * the base, so the two servers' answers differ only in ids and times.
 */
function bookingBody(b: BookingRefs, n: number, check = 0) {
  const slot = check ? -check : Math.floor(n / b.providers.length);
  return {
    patient_id: `pat_${b.patients[check ? 0 : n % b.patients.length]}`,
    branch_id: `br_${b.branch}`,
    provider_id: `prv_${b.providers[check ? 0 : n % b.providers.length]}`,
    type_id: `apt_${b.type}`,
    start: new Date(BOOKING_BASE_MS + slot * b.minutes * 60_000).toISOString(),
    note: BOOKING_NOTE,
  };
}

let bookingsSent = 0;
let bookingChecks = 0;

function casesFor(d: Dataset, databaseUrl: string): Case[] {
  const restCount = (j: any) => (Array.isArray(j?.data) ? j.data.length : 0);
  return [
    {
      id: 'list',
      label: 'REST list',
      method: 'GET',
      path: '/v1/patients?limit=25',
      target: 0.6,
      count: restCount,
    },
    {
      id: 'search',
      label: `REST name search "${d.namePrefix}"`,
      method: 'GET',
      path: `/v1/patients?query=${encodeURIComponent(d.namePrefix)}&limit=25`,
      target: null,
      count: restCount,
    },
    {
      id: 'phone',
      label: 'REST phone lookup',
      method: 'GET',
      path: `/v1/patients?phone=${encodeURIComponent(d.phone)}`,
      target: 0.5,
      count: restCount,
    },
    {
      id: 'chat-messages',
      label: 'REST chat messages',
      method: 'GET',
      path: '/v1/chat/messages?limit=25',
      target: 0.7,
      count: restCount,
    },
    {
      id: 'chat-conversations',
      label: 'REST chat conversations',
      method: 'GET',
      path: '/v1/chat/conversations?limit=25',
      target: 0.7,
      count: restCount,
    },
    {
      id: 'chat-sync',
      label: 'REST chat sync page (updated_since)',
      method: 'GET',
      path: `/v1/chat/messages?updated_since=${d.syncSince}&limit=25`,
      target: 0.7,
      count: restCount,
    },
    {
      id: 'graphql',
      label: 'GraphQL patients+owner+species+appts',
      method: 'POST',
      path: '/graphql',
      body: JSON.stringify({ query: GRAPHQL_QUERY }),
      target: 0.85,
      count: (j: any) => (j?.errors ? 0 : (j?.data?.patients?.edges?.length ?? 0)),
    },
    {
      id: 'booking',
      label: 'REST booking (POST /v1/appointments)',
      method: 'POST',
      path: '/v1/appointments',
      nextBody: () => JSON.stringify(bookingBody(d.booking, bookingsSent++)),
      checkBody: () => JSON.stringify(bookingBody(d.booking, 0, ++bookingChecks)),
      status: 201,
      target: 0.6,
      count: (j: any) => (typeof j?.data?.id === 'string' ? 1 : 0),
      // Each server books its own slot: ids and times differ (bookingProblems checks the times).
      comparable: (j: any) => ({
        ...j.data,
        id: null,
        start: null,
        end: null,
        created_at: null,
        updated_at: null,
      }),
      verify: (app, raw) => verifyBookings(databaseUrl, d, app, raw),
      summary: () => bookingTotals(databaseUrl, d.clinicId),
    },
  ];
}

/**
 * Problems of one server's booking answer: its slot, its ETag, its event row's `data`, and the
 * event's created_at equal to the appointment's (one instant per write).
 */
async function bookingProblems(client: pg.Client, d: Dataset, name: string, c: Checked): Promise<string[]> {
  const a = c.json.data;
  const out: string[] = [];
  const start = new Date(c.sent.start).toISOString();
  const end = new Date(Date.parse(start) + d.booking.minutes * 60_000).toISOString();
  if (a.start !== start || a.end !== end)
    out.push(`${name} booked ${a.start}–${a.end}, asked ${start}–${end}`);
  if (a.created_at !== a.updated_at)
    out.push(`${name} created_at ${a.created_at} ≠ updated_at ${a.updated_at}`);
  const etag = `"${Date.parse(a.updated_at)}"`;
  if (c.headers.get('etag') !== etag) out.push(`${name} ETag ${c.headers.get('etag')}, expected ${etag}`);
  const { rows } = await client.query<{ type: string; scope: string; data: unknown; created_at: Date }>(
    `select type, scope, data, created_at from event where clinic_id = $1 and data->>'id' = $2`,
    [d.clinicId, a.id],
  );
  if (rows.length !== 1) return [...out, `${name}: ${rows.length} event rows for ${a.id}`];
  const e = rows[0];
  if (e.type !== 'appointment.created' || e.scope !== 'appointments:read')
    out.push(`${name} event ${e.type} (scope ${e.scope})`);
  // One instant per write: the event's created_at is the row's (src/services/unit-of-work.ts).
  const ms = e.created_at.getTime() - Date.parse(a.created_at);
  if (ms) out.push(`${name}'s event created_at is ${ms} ms from the appointment's`);
  const diff = firstDifference(e.data, a);
  if (diff) out.push(`${name} event data ≠ its answer at ${diff}`);
  return out;
}

/** The booking's check beyond the answers: each server's event row holds what it answered. */
async function verifyBookings(databaseUrl: string, d: Dataset, app: Checked, raw: Checked) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const problems = [
      ...(await bookingProblems(client, d, 'app', app)),
      ...(await bookingProblems(client, d, 'raw', raw)),
    ];
    return problems.length
      ? { failed: true, text: `BOOKING CHECK FAILED: ${problems.join('; ')}` }
      : {
          failed: false,
          text: `slots, ETags and event rows (type, scope, data = the answer) as expected on both`,
        };
  } finally {
    await client.end();
  }
}

/** Every booking of the run has its event, and no more. */
async function bookingTotals(databaseUrl: string, clinicId: number) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ appointments: number; events: number }>(
      `select (select count(*)::int from appointment where clinic_id = $1 and note = $2) as appointments,
              (select count(*)::int from event where clinic_id = $1 and type = 'appointment.created' and data->>'note' = $2) as events`,
      [clinicId, BOOKING_NOTE],
    );
    const { appointments, events } = rows[0];
    return `booking: ${fmt(bookingsSent + bookingChecks)} requests built, ${fmt(appointments)} appointments and ${fmt(events)} appointment.created events in the database${appointments === events ? '' : ' (MISMATCH)'}`;
  } finally {
    await client.end();
  }
}

function headersFor(c: Case, key: string): Record<string, string> {
  return {
    authorization: `Bearer ${key}`,
    ...(c.body || c.nextBody ? { 'content-type': 'application/json', accept: 'application/json' } : {}),
  };
}

/** One request; throws unless it has the case's status (200) and a non-empty result. */
async function check(server: Server, c: Case, key: string): Promise<Checked> {
  const body = c.checkBody ? c.checkBody() : c.nextBody ? c.nextBody() : c.body;
  const res = await fetch(server.url + c.path, {
    method: c.method,
    headers: headersFor(c, key),
    body,
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const n = json === undefined ? 0 : c.count(json);
  const status = c.status ?? 200;
  if (res.status !== status || n === 0) {
    throw new Error(
      `${server.name} ${c.method} ${c.path}: expected ${status} with a non-empty result, got ${res.status} with ${n} items:\n${text.slice(0, 1000)}`,
    );
  }
  return { json, headers: res.headers, sent: c.nextBody && body ? JSON.parse(body) : undefined };
}

/** The first path at which two JSON values differ, or null. */
function firstDifference(a: unknown, b: unknown, at = '$'): string | null {
  if (isDeepStrictEqual(a, b)) return null;
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) {
      const d = firstDifference((a as any)[k], (b as any)[k], `${at}.${k}`);
      if (d) return d;
    }
  }
  return `${at}: app ${JSON.stringify(a)?.slice(0, 120)} vs raw ${JSON.stringify(b)?.slice(0, 120)}`;
}

async function load(server: Server, c: Case, key: string, seconds: number): Promise<Result> {
  const next = c.nextBody;
  const run = autocannon({
    url: server.url + c.path,
    method: c.method,
    headers: headersFor(c, key),
    // A write's body is made afresh for each request (autocannon builds each one just before sending it).
    ...(next ? { requests: [{ setupRequest: (req) => ({ ...req, body: next() }) }] } : { body: c.body }),
    connections: CONNECTIONS,
    duration: seconds,
    timeout: 10,
  });
  return run;
}

/**
 * CPU seconds (user + system) a process has used, from /proc/<pid>/stat, with `children` also
 * those of its ended children; 0 once it is gone.
 */
function cpuSeconds(pid: number | string, children = false): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    // utime, stime, cutime, cstime in clock ticks (USER_HZ is 100 on Linux)
    return (f[11] + f[12] + (children ? f[13] + f[14] : 0)) / 100;
  } catch {
    return 0;
  }
}

/**
 * CPU seconds of every PostgreSQL process on this machine (the server is local to the bench).
 * Backends that ended count through the postmaster's reaped-children time.
 */
function postgresCpuSeconds(): number {
  let total = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres') total += cpuSeconds(pid, true);
    } catch {}
  }
  return total;
}

/**
 * A timed run, sampling the server's JS heap once a second (peak heap, garbage included) and, with
 * --live-heap, once half-way after a forced full GC (the live heap under load). Off by default: a
 * forced GC changes how V8 sizes the heap afterwards, and so the peak RSS being measured.
 */
async function measure(
  server: Server,
  c: Case,
  key: string,
  seconds: number,
): Promise<Result & { heapPeak: number; liveHeap: number; cpuMs: { server: number; postgres: number } }> {
  let heapPeak = 0;
  let liveHeap = Number.NaN;
  const sample = () =>
    server.memory().then(
      (m) => {
        heapPeak = Math.max(heapPeak, m.heapUsed);
      },
      () => {},
    );
  const timer = setInterval(sample, 1000);
  const mid = setTimeout(
    () =>
      opts['live-heap'] &&
      server.memory(true).then(
        (m) => {
          liveHeap = m.heapUsed;
        },
        () => {},
      ),
    (seconds * 1000) / 2,
  );
  // CPU per request of the server and of PostgreSQL: where a request's cost goes, whatever the
  // throughput.
  const pid = server.child.pid as number;
  const before = { server: cpuSeconds(pid), postgres: postgresCpuSeconds() };
  try {
    const res = await load(server, c, key, seconds);
    const n = Math.max(1, res.requests.total);
    const cpuMs = {
      server: ((cpuSeconds(pid) - before.server) * 1000) / n,
      postgres: ((postgresCpuSeconds() - before.postgres) * 1000) / n,
    };
    await sample();
    return { ...res, heapPeak, liveHeap, cpuMs };
  } finally {
    clearInterval(timer);
    clearTimeout(mid);
  }
}

// ---------- report ----------

interface Row {
  c: Case;
  /** The app's and raw's runs of the round with the median app/raw ratio. */
  app: Result;
  raw: Result;
  /** app/raw of each round, app and raw run back to back. */
  ratios: number[];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells.map((s, i) => (i === 0 ? s.padEnd(widths[i]) : s.padStart(widths[i]))).join(' | ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('-|-'), ...rows.map(line)].join('\n');
}

function problems(r: Result): string | null {
  const bad = r.non2xx + r.errors + r.timeouts;
  return bad ? `${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts` : null;
}

// ---------- main ----------

async function main() {
  const { admin, bench } = databaseUrls();
  console.log(`database: ${bench.replace(/\/\/[^@]*@/, '//***@')}`);
  const d = await prepareDatabase(bench, admin);
  console.log(
    `dataset: clinic ${d.clinicId}, ${fmt(d.patients)} patients, ${fmt(d.owners)} owners, ${fmt(d.appointments)} appointments` +
      `${d.seededNow ? ' (seeded now)' : ' (reused)'}; name prefix "${d.namePrefix}" matches ${fmt(d.nameMatches)}, ` +
      `phone ${d.phone} matches ${d.phoneMatches}; chat: ${fmt(d.messages)} messages in ${fmt(d.conversations)} conversations, sync from ${d.syncSince}`,
  );

  const deadline = setTimeout(() => {
    console.error(`run exceeded ${RUN_BUDGET_MS / 1000} s after seeding; aborting`);
    killChildren();
    process.exit(2);
  }, RUN_BUDGET_MS);
  deadline.unref();

  const wanted = new Set(opts.cases.split(',').map((s) => s.trim()));
  const cases = casesFor(d, bench).filter((c) => wanted.has(c.id));
  if (!cases.length) throw new Error(`no cases selected by --cases=${opts.cases}`);

  let profDir: string | undefined;
  if (opts['cpu-prof']) {
    profDir = path.join(here, '.profiles');
    mkdirSync(profDir, { recursive: true });
  }
  const appFlags = (opts['app-flags'] ?? startFlags()).split(/\s+/).filter(Boolean);
  const [app, raw] = await Promise.all([
    startServer('app', bench, { cpuProfDir: profDir, flags: appFlags }),
    startServer('raw', bench, { cpuProfDir: opts['cpu-prof-raw'] ? profDir : undefined }),
  ]);
  console.log(
    `app ${app.url} (pid ${app.child.pid}${appFlags.length ? `, ${appFlags.join(' ')}` : ''}), raw ${raw.url} (pid ${raw.child.pid})`,
  );
  const idleRss = app.rss().now;
  const idleHeap = (await app.memory(true)).heapUsed;

  const failedChecks = new Set<string>();
  try {
    for (const c of cases) {
      const a = await check(app, c, d.key);
      const r = await check(raw, c, d.key);
      const same = (x: Checked) => (c.comparable ? c.comparable(x.json) : x.json);
      const diff = firstDifference(same(a), same(r));
      const verified = c.verify ? await c.verify(a, r) : undefined;
      const more = verified ? `; ${verified.text}` : '';
      // A case whose servers answered differently measures unequal work: its ratio is not reported as met.
      if (diff || verified?.failed) failedChecks.add(c.id);
      console.log(
        `check ${c.id}: ${c.status ?? 200}, ${c.count(a.json)} items; ${diff ? `RAW RESPONSE DIFFERS at ${diff}` : `app and raw JSON identical${c.comparable ? ' (but for ids and times)' : ''}`}${more}`,
      );
    }

    console.log(
      `\nautocannon: ${CONNECTIONS} connections; per case and server ${WARMUP} s warm-up, then ${ROUNDS} timed runs of ${DURATION} s alternating app and raw` +
        `${profDir ? ` (app under --cpu-prof: numbers are not representative)` : ''}\n`,
    );
    const rows: Row[] = [];
    for (const c of cases) {
      if (WARMUP > 0) for (const s of [app, raw]) await load(s, c, d.key, WARMUP);
      const rounds: { app: Result; raw: Result; ratio: number }[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        // Alternate which goes first, so neither always follows the other's load.
        const results: Partial<Record<'app' | 'raw', Result>> = {};
        for (const s of i % 2 ? [raw, app] : [app, raw]) {
          const res = await measure(s, c, d.key, DURATION);
          results[s.name] = res;
          console.log(
            `  ${c.id.padEnd(8)} ${s.name}: ${fmt(res.requests.average)} req/s, p50 ${res.latency.p50} ms, p99 ${res.latency.p99} ms, ` +
              `CPU/request ${res.cpuMs.server.toFixed(2)} ms + PostgreSQL ${res.cpuMs.postgres.toFixed(2)} ms, ` +
              `heap peak ${mb(res.heapPeak)}${Number.isNaN(res.liveHeap) ? '' : ` (live ${mb(res.liveHeap)})`}, RSS now ${mb(s.rss().now)}${problems(res) ? ` (${problems(res)})` : ''}`,
          );
        }
        const a = results.app as Result;
        const r = results.raw as Result;
        rounds.push({ app: a, raw: r, ratio: a.requests.average / r.requests.average });
      }
      const ratios = rounds.map((x) => x.ratio);
      const mid = rounds.find((x) => x.ratio === median(ratios)) as (typeof rounds)[number];
      rows.push({ c, app: mid.app, raw: mid.raw, ratios });
      if (c.summary) console.log(`  ${await c.summary()}`);
    }

    const rss = app.rss();
    const rawRss = raw.rss();
    const liveHeap = (await app.memory(true)).heapUsed;
    console.log(
      `\n${table(
        [
          'case',
          'app req/s',
          'app p50/p99 ms',
          'raw req/s',
          'raw p50/p99 ms',
          'app/raw',
          'rounds',
          'target',
          'met?',
        ],
        rows.map(({ c, app: a, raw: r, ratios }) => {
          const ratio = median(ratios);
          const invalid = problems(a) || problems(r) || (failedChecks.has(c.id) ? 'check' : null);
          return [
            c.label,
            fmt(a.requests.average),
            `${a.latency.p50} / ${a.latency.p99}`,
            fmt(r.requests.average),
            `${r.latency.p50} / ${r.latency.p99}`,
            fmt(ratio, 2),
            ratios.map((x) => fmt(x, 2)).join(' '),
            c.target ? `>= ${c.target}` : '-',
            invalid
              ? `INVALID (${invalid === 'check' ? 'check failed' : 'errors'})`
              : !c.target
                ? '-'
                : ratio >= c.target
                  ? 'yes'
                  : 'NO',
          ];
        }),
      )}`,
    );
    console.log(
      `\napp server RSS: peak (VmHWM) ${mb(rss.peak)}, now ${mb(rss.now)}, idle after start ${mb(idleRss)}; ` +
        `target peak <= ${RSS_TARGET_MB} MB: ${rss.peak <= RSS_TARGET_MB * 1024 * 1024 ? 'yes' : 'NO'}`,
    );
    console.log(
      `app server live heap (after a full GC): ${mb(idleHeap)} after start, ${mb(liveHeap)} after the runs`,
    );
    console.log(`raw server RSS: peak ${mb(rawRss.peak)}, now ${mb(rawRss.now)}`);
    for (const { c, app: a, raw: r } of rows) {
      for (const [name, res] of [
        ['app', a],
        ['raw', r],
      ] as const) {
        const p = problems(res);
        if (p)
          console.log(`WARNING ${c.id} ${name}: ${p}; status codes ${JSON.stringify(res.statusCodeStats)}`);
      }
    }
  } finally {
    await Promise.all([app.stop(), raw.stop()]);
    clearTimeout(deadline);
  }
  if (profDir)
    console.log(
      `\nCPU profile of the app server${opts['cpu-prof-raw'] ? ` (pid ${app.child.pid}) and of the raw server (pid ${raw.child.pid})` : ''} in ${profDir} (summarise: node bench/profile-summary.ts <file>)`,
    );
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e instanceof Error ? (e.stack ?? e.message) : e);
    killChildren();
    process.exit(1);
  },
);
