/**
 * `npm run bench`: the patients and chat endpoints and the booking of an appointment of the real
 * app against a raw baseline that runs the app's own SQL, and against PostGraphile 5.
 *
 *   1. Database `cg_bench` on DATABASE_URL's server (else postgresql://postgres@127.0.0.1:5432):
 *      created, migrated, and seeded once with one veterinary clinic of 100,000 animals (owners,
 *      species, appointments) and an API key with every read scope and appointments:write. Reruns
 *      reuse the data. For the booking case, the clinic also gets 32 providers of the bench's own
 *      ("Bench provider N"), and every run first deletes the bookings (and their events) that earlier
 *      runs made. Schema bench_pg (bench/postgraphile/schema.sql) is recreated on every run.
 *   2. PostGraphile's packages are the bench's own (bench/postgraphile/package.json and lockfile):
 *      `npm ci --prefix bench/postgraphile` runs when they are missing or stale, never through the
 *      project's `npm install`.
 *   3. The app's statements are captured afresh on every run: the app in a capture process of its
 *      own (bench/server.ts, BENCH_CAPTURE=1) records what its `pg` client sends for one request of
 *      each read case (bench/capture-app-sql.ts), and the raw server runs exactly those
 *      (bench/raw-server.ts). A change of the app's SQL reaches the raw server on the next run; if
 *      the raw server's code no longer fits it (another count of statements, other values), that
 *      case's check fails and its ratios are reported INVALID.
 *   4. Three child processes on loopback: bench/server.ts (the app: startHttpServer over MikroORM),
 *      bench/raw-server.ts (node:http + pg) and bench/postgraphile/server.ts. Separate processes,
 *      so the load generator does not share their event loop and each peak RSS (VmHWM) is its own.
 *   5. Every case is checked once before timing: the raw server's statements for it (traced) equal
 *      the app's (text, named or not, values) and its JSON equals the app's byte for byte;
 *      PostGraphile's ids (the same page through its own document) equal the app's, in order.
 *      Then each server gets a warm-up and timed autocannon runs with fixed concurrency, the
 *      servers back to back in rotating order. Each run also measures the CPU per request of the
 *      server process and of PostgreSQL; the summary gives app/raw and app/PostGraphile against
 *      issue 28's aims, CPU per request, the CPU per patient from 25 to 100 and each peak RSS.
 *   6. The booking case (POST /v1/appointments: the appointment and its appointment.created event
 *      in one transaction) sends a new slot with every request, so every one is a 201: request n
 *      books provider n mod 32 at 2100-01-01 plus (n div 32) slots of the type's duration, n
 *      counting up over the whole run (both servers, warm-ups included), so no two bookings ever
 *      overlap. Its statements are pinned (bench/booking-sql.ts, test/bench-sql.test.ts), not
 *      captured; its check compares the two answers but for ids and times, and reads both event
 *      rows back: each one's `data` must be its server's answer. PostGraphile does not book.
 *   7. --pooler (issue 35: the figures "with and without the pooler"): PgBouncer in transaction
 *      mode (bench/pgbouncer.ts) in front of the database. The app under test (and its capture
 *      process) has BENCH_DATABASE_URL through it and its session's connections direct
 *      (DATABASE_SESSION_URL, src/lib/session-url.ts), so its statements go unnamed, each
 *      transaction setting its own timeout, as docs/scale.md deploys it. The raw server goes
 *      through the same PgBouncer, its own statements (key, booking) unnamed too: it is the
 *      yardstick of the app's own cost on the same SQL over the same path, and with it direct
 *      app/raw would charge the pooler's hop and the lost prepared statements to the app; the
 *      pooler's own cost is the difference between the two runs' req/s (app's and raw's alike),
 *      and PgBouncer's CPU per request is printed beside the server's and PostgreSQL's.
 *      PostGraphile stays direct (a third party's connection settings: a startup `options`
 *      parameter PgBouncer refuses, its own prepared statements); with --pooler its column
 *      compares the app through the pooler with PostGraphile without it. Seeding, the checks'
 *      reads and the booking's clean-up stay direct. Without --pooler, all as before issue 35.
 *
 * Options: --cases=list,phone,search,list100,graphql,graphql100,chat-messages,chat-conversations,chat-sync,booking
 *          --rounds=3  --duration=5  --warmup=2  --connections=32  --patients=100000
 *          --no-postgraphile (no install, no third server)
 *          --cpu-prof (profile the app server; writes bench/.profiles/*.cpuprofile)
 *          --cpu-prof-raw (with --cpu-prof: the raw server as well)
 *          --app-flags="--max-semi-space-size=64"  (node flags for the app server, replacing the ones
 *          of `npm start`, which it runs with by default)
 *          --live-heap (report the live heap under load: one forced full GC half-way through each run)
 *          --pooler  --pool-size=20 (PgBouncer's default_pool_size)
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import type { EntityManager } from '@mikro-orm/postgresql';
import autocannon, { type Result } from 'autocannon';
import pg from 'pg';
import { createApiKey } from '../src/auth/keys.ts';
import { readScopes } from '../src/auth/scopes.ts';
import { openOrm } from '../src/db/orm.ts';
import { seedPatients } from '../src/demo/seed-patients.ts';
import { Clinic, Provider } from '../src/entities/index.ts';
import { ensureDatabase, migrate } from '../src/lib/database.ts';
import { toE164, toLocal } from '../src/lib/phone.ts';
import { createClinic } from '../src/services/clinics/clinics.ts';
import { captureAppStatements, statementDifference } from './capture-app-sql.ts';
import { prepareChat } from './chat-data.ts';
import { benchPooler, type Pooler, poolerLine } from './pgbouncer.ts';
import { ensurePostgraphileInstalled, killChildren, type Server, startServer } from './processes.ts';
import { type CapturedShapes, requestShape } from './request-shape.ts';
import type { CapturedStatement } from './statement-capture.ts';

const here = path.dirname(fileURLToPath(import.meta.url));

const { values: opts } = parseArgs({
  options: {
    cases: {
      type: 'string',
      default:
        'list,phone,search,list100,graphql,graphql100,chat-messages,chat-conversations,chat-sync,booking',
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
    /** Leave PostGraphile out (no install, no third server). */
    'no-postgraphile': { type: 'boolean', default: false },
    /** The app and the raw server through PgBouncer in transaction mode (issue 35). */
    pooler: { type: 'boolean', default: false },
    'pool-size': { type: 'string', default: '20' },
  },
});
const ROUNDS = Number(opts.rounds);
const DURATION = Number(opts.duration);
const WARMUP = Number(opts.warmup);
const CONNECTIONS = Number(opts.connections);
const PATIENTS = Number(opts.patients);
const POOL_SIZE = Number(opts['pool-size']);
/** PgBouncer under --pooler (started in main), else null. */
let pooler: Pooler | null = null;
const CLINIC_NAME = 'Bench Veterinary';
const DB_NAME = 'cg_bench';
/**
 * Everything after seeding must finish within this, or the run is aborted (children killed):
 * the timed runs of every case and server (three servers, two for the booking) half as long again,
 * and two minutes for starting, capturing and checking.
 */
const RUN_BUDGET_MS = (opts.cases.split(',').length * 3 * (WARMUP + ROUNDS * DURATION) * 1.5 + 120) * 1000;
/** Issue 28's aim for the app's peak RSS across all cases. */
const RSS_TARGET_MB = 280;
/** The booking case's providers: as many as the default connections, so requests rarely queue on one provider's lock. */
const BENCH_PROVIDERS = 32;
/** Marks the bench's bookings (and, in their `data`, their events), so each run deletes the last run's. */
const BOOKING_NOTE = 'bench booking';
/** The bench's bookings start here and later: no seeded appointment is that far ahead. */
const BOOKING_BASE_MS = Date.UTC(2100, 0, 1);

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
  /** The same phone as stored (E.164): what a PostGraphile client sends, having no phone parsing. */
  phoneE164: string;
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
  // The seed's batches are no requests: the request deadline would cancel them on a slow machine.
  const orm = await openOrm(benchUrl, { requestTimeouts: false });
  try {
    const applied = await migrate(orm);
    if (applied.length) console.log(`migrated: ${applied.join(', ')}`);
    const em = orm.em.fork();
    let clinic = await em.findOne(Clinic, { name: CLINIC_NAME });
    clinic ??= await createClinic(em, {
      name: CLINIC_NAME,
      kind: 'veterinary',
      mode: 'test',
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
      // PostGraphile's schema: views of the clinic's tables (bench/postgraphile/schema.sql).
      await client.query(readFileSync(path.join(here, 'postgraphile', 'schema.sql'), 'utf8'));
      return {
        clinicId,
        key: key.key,
        ...chat,
        booking: await bookingRefs(client, clinicId),
        ...totals,
        namePrefix: prefix.p,
        nameMatches: nameMatches.n,
        phone: toLocal(phone.phone, 'IL') ?? phone.phone,
        phoneE164: toE164(toLocal(phone.phone, 'IL') ?? phone.phone, 'IL') ?? phone.phone,
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

/** The nested GraphQL case's document, for a page of `first` patients (bench/raw-server.ts knows its text). */
const graphqlQuery = (first: number) =>
  `{ patients(first: ${first}) { edges { node { id firstName lastName phone owner { id firstName } species { id name } appointments(first: 5) { edges { node { id start end status { name } } } } } } } }`;

/** The number in an app id (`pat_12` → 12), as PostGraphile's rowId gives it. */
const num = (id: unknown) => (id == null ? null : Number(String(id).replace(/^[a-z]+_/, '')));

/** The same page from PostGraphile 5 (bench/postgraphile/): its document and the ids in its answer. */
interface PostgraphileCase {
  query: string;
  /** The ids of its answer, in order, as `Case.ids` reads the app's. */
  ids(json: any): unknown;
}

const PATIENT_FIELDS =
  'rowId firstName lastName phone email gender birthDate createdAt updatedAt patientStatusByStatusId { rowId name color }';
const MESSAGE_FIELDS =
  'rowId conversationId direction type fromPhone toPhone patientPhone text mediaType templateName repliedToId reactionPatient reactionClinic failureReason sentAt deliveredAt readAt failedAt createdAt updatedAt patients { nodes { rowId firstName lastName phone } }';
const CONVERSATION_FIELDS =
  'rowId displayName patientPhone clinicPhone lastMessagePreview lastActivityAt lastInboundAt lastOutboundAt isHandled createdAt updatedAt patients { nodes { rowId firstName lastName phone } }';
const PAGE_INFO = 'pageInfo { hasNextPage endCursor }';

const restIds = (j: any) => j.data.map((x: any) => num(x.id));
const chatIds = (j: any) => j.data.map((x: any) => [num(x.id), x.patients.map((p: any) => num(p.id))]);
const pgNodes = (field: string) => (j: any) => j.data[field].nodes.map((x: any) => num(x.rowId));
const pgChat = (field: string) => (j: any) =>
  j.data[field].nodes.map((x: any) => [x.rowId, x.patients.nodes.map((p: any) => p.rowId)]);

function patientsPage(first: number): PostgraphileCase {
  return {
    query: `{ allPatients(first: ${first}, orderBy: PRIMARY_KEY_ASC) { nodes { ${PATIENT_FIELDS} } ${PAGE_INFO} } }`,
    ids: pgNodes('allPatients'),
  };
}

function nestedCase(first: number): Pick<Case, 'ids' | 'postgraphile'> {
  return {
    ids: (j) =>
      j.data.patients.edges.map(({ node: n }: any) => [
        num(n.id),
        num(n.owner?.id),
        num(n.species?.id),
        n.appointments.edges.map((e: any) => num(e.node.id)),
      ]),
    postgraphile: {
      query: `{ allPatients(first: ${first}, orderBy: PRIMARY_KEY_ASC) { nodes { rowId firstName lastName phone ownerByOwnerId { rowId firstName } speciesBySpeciesId { rowId name } appointmentsByPatientId(first: 5, orderBy: [START_AT_DESC, PRIMARY_KEY_DESC]) { nodes { rowId startAt endAt appointmentStatusByStatusId { name } } } } } }`,
      ids: (j) =>
        j.data.allPatients.nodes.map((n: any) => [
          n.rowId,
          n.ownerByOwnerId?.rowId ?? null,
          n.speciesBySpeciesId?.rowId ?? null,
          n.appointmentsByPatientId.nodes.map((a: any) => a.rowId),
        ]),
    },
  };
}

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
  /** Minimum app/PostGraphile throughput ratio the issue sets; null where it sets none. */
  postgraphileTarget?: number;
  /** The same read from PostGraphile, where it can express it. */
  postgraphile?: PostgraphileCase;
  /** The ids of the app's answer, in order (compared with PostGraphile's). */
  ids?(json: any): unknown;
  /** Patients a page carries, for the CPU per patient between the 25 and 100 pages. */
  patients?: number;
  /** Its statements are captured from the app and run by the raw server (all the reads). */
  captured?: boolean;
  /** The number of items a correct response carries (must be > 0). */
  count(json: any): number;
  /** What of the two servers' answers must be the same; all of it unless given. */
  comparable?(json: any): unknown;
  /** Checks beyond the answers; `failed` marks the case's ratio INVALID in the report. */
  verify?(app: Checked, raw: Checked): Promise<{ failed: boolean; text: string }>;
  /** A line for the report after the timed runs. */
  summary?(): Promise<string>;
}

/** A checked response, with the body that was sent. */
interface Checked {
  json: any;
  /** The answer's bytes, as sent. */
  text: string;
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
  const rest = { method: 'GET' as const, count: restCount, ids: restIds, captured: true, target: 0.9 };
  const chat = { ...rest, ids: chatIds };
  const graphql = {
    method: 'POST' as const,
    path: '/graphql',
    count: (j: any) => (j?.errors ? 0 : (j?.data?.patients?.edges?.length ?? 0)),
    captured: true,
    target: 0.85,
    postgraphileTarget: 1.3,
  };
  return [
    {
      ...rest,
      id: 'list',
      label: 'REST list, 25',
      path: '/v1/patients?limit=25',
      patients: 25,
      postgraphile: patientsPage(25),
    },
    {
      ...rest,
      id: 'phone',
      label: 'REST phone lookup',
      path: `/v1/patients?phone=${encodeURIComponent(d.phone)}`,
      postgraphile: {
        query: `{ allPatients(condition: { phone: ${JSON.stringify(d.phoneE164)} }, first: 25, orderBy: PRIMARY_KEY_ASC) { nodes { ${PATIENT_FIELDS} } ${PAGE_INFO} } }`,
        ids: pgNodes('allPatients'),
      },
    },
    {
      ...rest,
      id: 'search',
      label: `REST name search "${d.namePrefix}"`,
      path: `/v1/patients?query=${encodeURIComponent(d.namePrefix)}&limit=25`,
      postgraphile: {
        query: `{ searchPatients(prefix: ${JSON.stringify(d.namePrefix)}, first: 25) { nodes { ${PATIENT_FIELDS} } ${PAGE_INFO} } }`,
        ids: pgNodes('searchPatients'),
      },
    },
    {
      ...rest,
      id: 'list100',
      label: 'REST list, 100',
      path: '/v1/patients?limit=100',
      patients: 100,
      postgraphile: patientsPage(100),
    },
    {
      ...graphql,
      ...nestedCase(25),
      id: 'graphql',
      label: 'GraphQL 25 patients+owner+species+5 appts',
      body: JSON.stringify({ query: graphqlQuery(25) }),
      patients: 25,
    },
    {
      ...graphql,
      ...nestedCase(100),
      id: 'graphql100',
      label: 'GraphQL, 100 patients',
      body: JSON.stringify({ query: graphqlQuery(100) }),
      patients: 100,
    },
    {
      ...chat,
      id: 'chat-messages',
      label: 'REST chat messages',
      path: '/v1/chat/messages?limit=25',
      postgraphile: {
        query: `{ allMessages(first: 25, orderBy: [CREATED_AT_DESC, PRIMARY_KEY_DESC]) { nodes { ${MESSAGE_FIELDS} } ${PAGE_INFO} } }`,
        ids: pgChat('allMessages'),
      },
    },
    {
      ...chat,
      id: 'chat-conversations',
      label: 'REST chat conversations',
      path: '/v1/chat/conversations?limit=25',
      postgraphile: {
        query: `{ recentConversations(first: 25) { nodes { ${CONVERSATION_FIELDS} } ${PAGE_INFO} } }`,
        ids: pgChat('recentConversations'),
      },
    },
    {
      ...chat,
      id: 'chat-sync',
      label: 'REST chat sync page (updated_since)',
      path: `/v1/chat/messages?updated_since=${d.syncSince}&limit=25`,
      postgraphile: {
        query: `{ messagesSince(since: ${JSON.stringify(d.syncSince)}, first: 25) { nodes { ${MESSAGE_FIELDS} } ${PAGE_INFO} } }`,
        ids: pgChat('messagesSince'),
      },
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

/** What a server is sent for a case: PostGraphile gets the case's PostGraphile document. */
function requestOf(
  server: Server,
  c: Case,
): Pick<Case, 'method' | 'path' | 'body' | 'nextBody' | 'checkBody'> {
  if (server.name !== 'postgraphile') return c;
  if (!c.postgraphile) throw new Error(`case ${c.id} has no PostGraphile form`);
  return { method: 'POST', path: '/graphql', body: JSON.stringify({ query: c.postgraphile.query }) };
}

function headersFor(r: Pick<Case, 'body' | 'nextBody'>, key: string): Record<string, string> {
  return {
    authorization: `Bearer ${key}`,
    ...(r.body || r.nextBody ? { 'content-type': 'application/json', accept: 'application/json' } : {}),
  };
}

/** One request; throws unless it has the case's status (200) and a non-empty result. */
async function check(server: Server, c: Case, key: string): Promise<Checked> {
  const r = requestOf(server, c);
  const body = r.checkBody ? r.checkBody() : r.nextBody ? r.nextBody() : r.body;
  const res = await fetch(server.url + r.path, { method: r.method, headers: headersFor(r, key), body });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const count = (j: any) => {
    if (server.name !== 'postgraphile') return c.count(j);
    const ids = j?.errors ? [] : c.postgraphile?.ids(j);
    return Array.isArray(ids) ? ids.length : 0;
  };
  const n = json === undefined ? 0 : count(json);
  const status = server.name === 'postgraphile' ? 200 : (c.status ?? 200);
  if (res.status !== status || n === 0) {
    throw new Error(
      `${server.name} ${r.method} ${r.path}: expected ${status} with a non-empty result, got ${res.status} with ${n} items:\n${text.slice(0, 1000)}`,
    );
  }
  return { json, text, headers: res.headers, sent: r.nextBody && body ? JSON.parse(body) : undefined };
}

/** The first path at which two JSON values differ, or null. */
function firstDifference(a: unknown, b: unknown, at = '$', other = 'raw'): string | null {
  if (isDeepStrictEqual(a, b)) return null;
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) {
      const d = firstDifference((a as any)[k], (b as any)[k], `${at}.${k}`, other);
      if (d) return d;
    }
  }
  return `${at}: app ${JSON.stringify(a)?.slice(0, 120)} vs ${other} ${JSON.stringify(b)?.slice(0, 120)}`;
}

async function load(server: Server, c: Case, key: string, seconds: number): Promise<Result> {
  const r = requestOf(server, c);
  const next = r.nextBody;
  const run = autocannon({
    url: server.url + r.path,
    method: r.method,
    headers: headersFor(r, key),
    // A write's body is made afresh for each request (autocannon builds each one just before sending it).
    ...(next ? { requests: [{ setupRequest: (req) => ({ ...req, body: next() }) }] } : { body: r.body }),
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
 * CPU seconds of the PostgreSQL server's work for the bench (the server is local to the bench):
 * its shared processes (postmaster, writers, checkpointer) and the backends of the bench's
 * database, not those of other databases: tests run against the same server, and their backends
 * made the PostgreSQL figure of a run meaningless. The servers' pools keep their connections
 * under load, so a backend's time is counted while it lives; ended backends (reaped by the
 * postmaster, whatever their database) are not.
 */
function postgresCpuByPid(): Map<string, number> {
  const out = new Map<string, number>();
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
      // A backend's title: "postgres: [cluster: ]user database host(port) state".
      const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const backend = /^postgres: (?:\S+: )?\S+ (\S+) (?:\[local\]|\S+\(\d+\))/.exec(title);
      if (backend && backend[1] !== DB_NAME) continue;
      out.set(pid, cpuSeconds(pid));
    } catch {}
  }
  return out;
}

/**
 * PostgreSQL's CPU seconds between two samples, process by process: a backend that ended in
 * between (a pool closing an idle connection) drops out instead of taking its whole lifetime's
 * time off the total (which made some rounds' figure negative); a new one counts from zero.
 */
function postgresCpuSince(before: Map<string, number>): number {
  let total = 0;
  for (const [pid, seconds] of postgresCpuByPid()) total += seconds - (before.get(pid) ?? 0);
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
): Promise<
  Result & { heapPeak: number; liveHeap: number; cpuMs: { server: number; postgres: number; pooler: number } }
> {
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
  const poolerPid = pooler?.pid;
  const before = {
    server: cpuSeconds(pid),
    postgres: postgresCpuByPid(),
    pooler: poolerPid ? cpuSeconds(poolerPid) : 0,
  };
  try {
    const res = await load(server, c, key, seconds);
    const n = Math.max(1, res.requests.total);
    const cpuMs = {
      server: ((cpuSeconds(pid) - before.server) * 1000) / n,
      postgres: (postgresCpuSince(before.postgres) * 1000) / n,
      // PgBouncer's (under --pooler; PostGraphile's runs do not go through it, but count what it did).
      pooler: poolerPid ? ((cpuSeconds(poolerPid) - before.pooler) * 1000) / n : 0,
    };
    await sample();
    return { ...res, heapPeak, liveHeap, cpuMs };
  } finally {
    clearInterval(timer);
    clearTimeout(mid);
  }
}

// ---------- report ----------

type Measured = Awaited<ReturnType<typeof measure>>;
type Timed = 'app' | 'raw' | 'postgraphile';

interface Row {
  c: Case;
  /** Each server's run of the median round (by app/raw), and the rounds' ratios. */
  runs: Partial<Record<Timed, Measured>>;
  /** app/raw and app/PostGraphile of each round, the servers run back to back. */
  ratios: { raw: number[]; postgraphile: number[] };
  /** Each server's median CPU per request over the rounds, ms: its own, PostgreSQL's and PgBouncer's. */
  cpu: Partial<Record<Timed, { server: number; postgres: number; pooler: number }>>;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits });
/** A ratio, or '-' where a server was left out (it failed its check). */
const fmtRatio = (x: number) => (Number.isNaN(x) ? '-' : fmt(x, 2));
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

const met = (ratio: number | undefined, target: number | null | undefined, invalid: string | null) =>
  invalid
    ? `INVALID (${invalid})`
    : target == null || ratio === undefined
      ? '-'
      : ratio >= target
        ? 'yes'
        : 'NO';

// ---------- checks ----------

/** The case's shape, as the raw server computes it for the same request. */
function shapeOf(c: Case): string {
  const u = new URL(c.path, 'http://127.0.0.1');
  return requestShape(c.method, u, c.body ? JSON.parse(c.body).query : undefined);
}

/** The first byte at which two answers differ, with some context, or null. */
function byteDifference(a: string, b: string): string | null {
  if (a === b) return null;
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return `byte ${i}: app …${JSON.stringify(a.slice(Math.max(0, i - 40), i + 40))} vs raw …${JSON.stringify(b.slice(Math.max(0, i - 40), i + 40))}`;
}

/**
 * The raw server against the app: the same statements for the same request (traced on the raw
 * server, captured from the app) and the same JSON to the byte. PostGraphile against the app:
 * the same ids in the same order. Lines for the report; the failed cases go to `failed`.
 */
async function checkCase(
  c: Case,
  servers: { app: Server; raw: Server; postgraphile?: Server },
  key: string,
  captured: CapturedShapes,
  failed: Map<string, Set<Timed>>,
  unanswered: Map<string, Set<Timed>>,
): Promise<string> {
  const fail = (s: Timed) => failed.set(c.id, (failed.get(c.id) ?? new Set()).add(s));
  const a = await check(servers.app, c, key);
  // A server that cannot answer the case (the raw server's code no longer fits the app's
  // statements, a PostGraphile error) fails its check and is left out of the case's timing.
  const attempt = async (s: Timed, run: () => Promise<string>) => {
    try {
      return await run();
    } catch (e) {
      fail(s);
      unanswered.set(c.id, (unanswered.get(c.id) ?? new Set()).add(s));
      return `${s.toUpperCase()} FAILED: ${(e instanceof Error ? e.message : String(e)).slice(0, 600)}`;
    }
  };
  const rawLine = await attempt('raw', async () => {
    let r: Checked;
    let line: string;
    if (c.captured) {
      await check(servers.raw, c, key); // warm: the key lookup, the columns' positions
      await servers.raw.ask('trace-start', 'trace-started');
      let statements: CapturedStatement[];
      try {
        r = await check(servers.raw, c, key);
      } finally {
        ({ statements } = await servers.raw.ask<{ statements: CapturedStatement[] }>('trace-stop', 'traced'));
      }
      const app = captured.shapes[shapeOf(c)] ?? [];
      const sql = statementDifference(app, statements);
      const bytes = byteDifference(a.text, r.text);
      if (sql || bytes) fail('raw');
      const kinds = app.map((x) => (x.name ? 'named' : 'unnamed')).join(', ');
      line = `${sql ? `RAW SQL DIFFERS: ${sql}` : `raw ran the app's ${app.length} statements (${kinds})`}; ${bytes ? `RAW JSON DIFFERS at ${bytes}` : `JSON identical to the byte (${fmt(a.text.length)} bytes)`}`;
    } else {
      r = await check(servers.raw, c, key);
      const same = (x: Checked) => (c.comparable ? c.comparable(x.json) : x.json);
      const diff = firstDifference(same(a), same(r));
      if (diff) fail('raw');
      line = diff
        ? `RAW RESPONSE DIFFERS at ${diff}`
        : `app and raw JSON equal${c.comparable ? ' (but for ids and times)' : ''}`;
    }
    const verified = c.verify ? await c.verify(a, r) : undefined;
    if (verified?.failed) fail('raw');
    return `${line}${verified ? `; ${verified.text}` : ''}`;
  });
  let pgLine = '';
  const { postgraphile } = servers;
  const { postgraphile: pgCase, ids } = c;
  if (pgCase && postgraphile && ids) {
    pgLine = `; ${await attempt('postgraphile', async () => {
      const p = await check(postgraphile, c, key);
      const diff = firstDifference(ids(a.json), pgCase.ids(p.json), '$', 'PostGraphile');
      if (diff) fail('postgraphile');
      return diff ? `POSTGRAPHILE IDS DIFFER at ${diff}` : `PostGraphile's ids equal the app's, in order`;
    })}`;
  }
  return `check ${c.id}: ${c.status ?? 200}, ${c.count(a.json)} items; ${rawLine}${pgLine}`;
}

// ---------- main ----------

async function main() {
  const { admin, bench } = databaseUrls();
  console.log(`database: ${bench.replace(/\/\/[^@]*@/, '//***@')}`);
  const wanted = new Set(opts.cases.split(',').map((s) => s.trim()));
  const withPostgraphile = !opts['no-postgraphile'];
  if (withPostgraphile) ensurePostgraphileInstalled();
  const d = await prepareDatabase(bench, admin);
  // The app (and its capture process) and the raw server: through PgBouncer under --pooler.
  pooler = await benchPooler(opts.pooler, bench, POOL_SIZE);
  const served = pooler ? pooler.through(bench) : bench;
  const appEnv: Record<string, string> = pooler ? { BENCH_DATABASE_SESSION_URL: bench } : {};
  const rawEnv: Record<string, string> = pooler ? { BENCH_UNNAMED: '1' } : {};
  console.log(
    `${poolerLine(pooler, POOL_SIZE)}${pooler ? ' (the app and the raw server; PostGraphile direct)' : ''}`,
  );
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

  const cases = casesFor(d, bench).filter((c) => wanted.has(c.id));
  if (!cases.length) throw new Error(`no cases selected by --cases=${opts.cases}`);

  // The app's statements, captured afresh on every run from a process of its own, for the raw server.
  const capturing = await startServer('capture', served, { env: { BENCH_CAPTURE: '1', ...appEnv } });
  let captured: CapturedShapes;
  try {
    captured = await captureAppStatements(
      capturing,
      cases
        .filter((c) => c.captured)
        .map((c) => ({
          id: c.id,
          shape: shapeOf(c),
          send: async (s) => {
            await check(s, c, d.key);
          },
        })),
    );
  } finally {
    await capturing.stop();
  }
  const statementsFile = path.join(tmpdir(), `cg-bench-statements-${process.pid}.json`);
  writeFileSync(statementsFile, JSON.stringify(captured, null, 2));
  console.log(`captured the app's statements for ${Object.keys(captured.shapes).length} request shapes`);

  let profDir: string | undefined;
  if (opts['cpu-prof']) {
    profDir = path.join(here, '.profiles');
    mkdirSync(profDir, { recursive: true });
  }
  const appFlags = (opts['app-flags'] ?? startFlags()).split(/\s+/).filter(Boolean);
  const usePostgraphile = withPostgraphile && cases.some((c) => c.postgraphile);
  const [app, raw, postgraphile] = await Promise.all([
    startServer('app', served, { cpuProfDir: profDir, flags: appFlags, ...(pooler ? { env: appEnv } : {}) }),
    startServer('raw', served, {
      cpuProfDir: opts['cpu-prof-raw'] ? profDir : undefined,
      env: { BENCH_STATEMENTS: statementsFile, ...rawEnv },
    }),
    usePostgraphile ? startServer('postgraphile', bench) : undefined,
  ]);
  console.log(
    `app ${app.url} (pid ${app.child.pid}${appFlags.length ? `, ${appFlags.join(' ')}` : ''}), raw ${raw.url} (pid ${raw.child.pid})` +
      `${postgraphile ? `, PostGraphile ${postgraphile.url} (pid ${postgraphile.child.pid})` : ''}`,
  );
  const idleRss = app.rss().now;
  const idleHeap = (await app.memory(true)).heapUsed;

  const failed = new Map<string, Set<Timed>>();
  const unanswered = new Map<string, Set<Timed>>();
  const all = [app, raw, ...(postgraphile ? [postgraphile] : [])];
  try {
    for (const c of cases)
      console.log(await checkCase(c, { app, raw, postgraphile }, d.key, captured, failed, unanswered));

    console.log(
      `\nautocannon: ${CONNECTIONS} connections; per case and server ${WARMUP} s warm-up, then ${ROUNDS} timed runs of ${DURATION} s, the servers back to back in turn` +
        `${profDir ? ` (app under --cpu-prof: numbers are not representative)` : ''}\n`,
    );
    const rows: Row[] = [];
    for (const c of cases) {
      const servers = all.filter(
        (s) => (s.name !== 'postgraphile' || c.postgraphile) && !unanswered.get(c.id)?.has(s.name as Timed),
      );
      if (WARMUP > 0) for (const s of servers) await load(s, c, d.key, WARMUP);
      const rounds: Partial<Record<Timed, Measured>>[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        // Rotate which goes first, so none always follows another's load.
        const order = servers.map((_, k) => servers[(k + i) % servers.length]);
        const results: Partial<Record<Timed, Measured>> = {};
        for (const s of order) {
          const res = await measure(s, c, d.key, DURATION);
          results[s.name as Timed] = res;
          console.log(
            `  ${c.id.padEnd(18)} ${s.name.padEnd(12)} ${fmt(res.requests.average).padStart(6)} req/s, p50 ${res.latency.p50} ms, p99 ${res.latency.p99} ms, ` +
              `CPU/request ${res.cpuMs.server.toFixed(2)} ms + PostgreSQL ${res.cpuMs.postgres.toFixed(2)} ms${pooler ? ` + PgBouncer ${res.cpuMs.pooler.toFixed(2)} ms` : ''}, ` +
              `heap peak ${mb(res.heapPeak)}${Number.isNaN(res.liveHeap) ? '' : ` (live ${mb(res.liveHeap)})`}, RSS now ${mb(s.rss().now)}${problems(res) ? ` (${problems(res)})` : ''}`,
          );
        }
        rounds.push(results);
      }
      const ratio = (x: Partial<Record<Timed, Measured>>, of: Timed) =>
        x.app && x[of] ? x.app.requests.average / (x[of] as Measured).requests.average : Number.NaN;
      const rawRatios = rounds.map((x) => ratio(x, 'raw'));
      const mid = rounds[Math.max(0, rawRatios.indexOf(median(rawRatios)))];
      const cpu: Row['cpu'] = {};
      for (const s of servers) {
        const name = s.name as Timed;
        const of = (k: 'server' | 'postgres' | 'pooler') =>
          median(rounds.map((x) => (x[name] as Measured).cpuMs[k]));
        cpu[name] = { server: of('server'), postgres: of('postgres'), pooler: of('pooler') };
      }
      rows.push({
        c,
        runs: mid,
        ratios: {
          raw: rawRatios,
          postgraphile: c.postgraphile && postgraphile ? rounds.map((x) => ratio(x, 'postgraphile')) : [],
        },
        cpu,
      });
      if (c.summary) console.log(`  ${await c.summary()}`);
    }

    const peaks = Object.fromEntries(all.map((s) => [s.name, s.rss()]));
    const liveHeap = (await app.memory(true)).heapUsed;
    const invalid = (row: Row, s: Timed) =>
      (row.runs.app && problems(row.runs.app)) || (row.runs[s] && problems(row.runs[s] as Measured))
        ? 'errors'
        : failed.get(row.c.id)?.has(s)
          ? 'check failed'
          : null;
    const rate = (m?: Measured) => (m ? fmt(m.requests.average) : '-');
    const lat = (m?: Measured) => (m ? `${m.latency.p50} / ${m.latency.p99}` : '-');
    console.log(
      `\n${table(
        [
          'case',
          'app req/s',
          'p50/p99 ms',
          'raw req/s',
          'p50/p99 ms',
          'PostGraphile',
          'p50/p99 ms',
          'app/raw',
          'rounds',
          'target',
          'met?',
          'app/PostGraphile',
          'rounds',
          'target',
          'met?',
        ],
        rows.map((row) => {
          const { c, runs, ratios } = row;
          const toRaw = median(ratios.raw);
          const toPg = ratios.postgraphile.length ? median(ratios.postgraphile) : undefined;
          return [
            c.label,
            rate(runs.app),
            lat(runs.app),
            rate(runs.raw),
            lat(runs.raw),
            rate(runs.postgraphile),
            lat(runs.postgraphile),
            fmtRatio(toRaw),
            ratios.raw.map(fmtRatio).join(' '),
            c.target ? `>= ${c.target}` : '-',
            met(toRaw, c.target, invalid(row, 'raw')),
            toPg === undefined ? '-' : fmtRatio(toPg),
            ratios.postgraphile.map(fmtRatio).join(' ') || '-',
            c.postgraphileTarget ? `>= ${c.postgraphileTarget}` : '-',
            toPg === undefined ? '-' : met(toPg, c.postgraphileTarget, invalid(row, 'postgraphile')),
          ];
        }),
      )}`,
    );
    const ms = (x?: { server: number; postgres: number; pooler: number }) =>
      x
        ? `${x.server.toFixed(2)} + ${x.postgres.toFixed(2)}${pooler ? ` + ${x.pooler.toFixed(2)}` : ''}`
        : '-';
    console.log(
      `\nCPU per request, ms (server process + PostgreSQL${pooler ? ' + PgBouncer' : ''}), medians of the rounds:\n${table(
        ['case', 'app', 'raw', 'PostGraphile', 'app server / raw server'],
        rows.map(({ c, cpu }) => [
          c.label,
          ms(cpu.app),
          ms(cpu.raw),
          ms(cpu.postgraphile),
          cpu.app && cpu.raw ? fmt(cpu.app.server / cpu.raw.server, 2) : '-',
        ]),
      )}`,
    );
    // Issue 28: the app's CPU per patient from 25 to 100 grows no faster than raw's.
    for (const [small, large] of [
      ['list', 'list100'],
      ['graphql', 'graphql100'],
    ]) {
      const s = rows.find((r) => r.c.id === small);
      const l = rows.find((r) => r.c.id === large);
      if (!s || !l) continue;
      const per = (name: Timed) => {
        const a = s.cpu[name];
        const b = l.cpu[name];
        if (!a || !b) return null;
        const patients = (l.c.patients ?? 0) - (s.c.patients ?? 0);
        return { perPatient: ((b.server - a.server) * 1000) / patients, growth: b.server / a.server };
      };
      const a = per('app');
      const r = per('raw');
      if (!a || !r) continue;
      console.log(
        `CPU per patient, ${s.c.patients} → ${l.c.patients} (${small} → ${large}), server process: app ${fmt(a.perPatient, 1)} µs per extra patient (×${fmt(a.growth, 2)}), ` +
          `raw ${fmt(r.perPatient, 1)} µs (×${fmt(r.growth, 2)}); target: app's growth <= raw's: ${a.growth <= r.growth ? 'yes' : 'NO'}`,
      );
    }
    console.log(
      `\napp server RSS: peak (VmHWM) ${mb(peaks.app.peak)}, now ${mb(peaks.app.now)}, idle after start ${mb(idleRss)}; ` +
        `target peak <= ${RSS_TARGET_MB} MB: ${peaks.app.peak <= RSS_TARGET_MB * 1024 * 1024 ? 'yes' : 'NO'}`,
    );
    console.log(
      `app server live heap (after a full GC): ${mb(idleHeap)} after start, ${mb(liveHeap)} after the runs`,
    );
    console.log(
      `raw server RSS: peak ${mb(peaks.raw.peak)}, now ${mb(peaks.raw.now)}` +
        `${peaks.postgraphile ? `; PostGraphile RSS: peak ${mb(peaks.postgraphile.peak)}, now ${mb(peaks.postgraphile.now)}` : ''}`,
    );
    for (const { c, runs } of rows) {
      for (const [name, res] of Object.entries(runs)) {
        const p = problems(res as Measured);
        if (p)
          console.log(
            `WARNING ${c.id} ${name}: ${p}; status codes ${JSON.stringify((res as Measured).statusCodeStats)}`,
          );
      }
    }
    if (pooler) {
      const st = await pooler.stats(DB_NAME);
      console.log(
        `through PgBouncer: ${st.transactions} transactions since it started, ${st.serverConnections} server connections open now for ${st.clients} clients`,
      );
    }
  } finally {
    await Promise.all(all.map((s) => s.stop()));
    await pooler?.close();
    clearTimeout(deadline);
    rmSync(statementsFile, { force: true });
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
