/**
 * The raw baseline: what the benchmarked endpoints cost with no framework at all, running the
 * app's own SQL. `node:http` over a `pg` Pool (the size of the app's ORM pool):
 *
 *   GET  /v1/patients?limit | phone | query       the REST list / phone lookup / name search
 *   GET  /v1/chat/messages[?updated_since], GET /v1/chat/conversations
 *   POST /graphql        the benchmark's patients documents (any first: N), recognised by their text
 *   POST /v1/appointments  a booking and its event in one transaction: the app's statements
 *        (bench/booking-sql.ts, held to the app's by test/bench-sql.test.ts)
 *
 * The read statements are not written here: bench/patients.ts captures them from the app on
 * every run (bench/statement-capture.ts) and hands them over in BENCH_STATEMENTS, by request
 * shape (bench/request-shape.ts). This server runs them as the app does, named or unnamed, rows
 * as arrays, dates and timestamps read as text (MikroORM's type overrides); only the values (in
 * the app's order) and the presenting are written here. The harness traces what it ran for each
 * case and compares it with the app's, statement by statement, and its JSON with the app's, byte
 * for byte: an app that runs other statements, or a different number of them, fails the check
 * until this code follows it.
 *
 * Like the app it hashes the API key on every request and keeps verified keys in a Map for 5 s,
 * formats phones with the same libphonenumber helper and presents points in time with the app's
 * text-to-ISO helper. Unlike the app it has no request ids, no logging and no GraphQL parsing: it
 * is the floor, not a competitor.
 *
 * Through PgBouncer (bench/patients.ts --pooler: BENCH_UNNAMED=1), its own statements (the key
 * lookup, the booking's) go unnamed as the app's then do (src/lib/statement-names.ts): a
 * transaction pooler keeps no prepared statement from one transaction to the next.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { numberPlaceholders } from '../src/db/named-statements.ts';
import { toE164, toInternational, toLocal } from '../src/lib/phone.ts';
import { escapeLike, foldForSearch } from '../src/lib/text.ts';
import { pgTimestampToIso } from '../src/lib/timestamps.ts';
import { bookingSql } from './booking-sql.ts';
import { serveUntilParentLeaves } from './child.ts';
import { type CapturedShapes, requestShape } from './request-shape.ts';
import { type CapturedStatement, describeQuery } from './statement-capture.ts';

const url = process.env.BENCH_DATABASE_URL;
if (!url) throw new Error('BENCH_DATABASE_URL is not set');

// Dates, timestamps and intervals as PostgreSQL's text, arrays of them as arrays of text, as the
// app's pool reads them (MikroORM's type overrides, @mikro-orm/sql createPostgreSqlTypeParsers).
const types = new pg.TypeOverrides();
for (const oid of [1082, 1114, 1184, 1186]) types.setTypeParser(oid, (v: string) => v);
const textArray = (pg.types.getTypeParser as (oid: number) => (v: string) => unknown)(1009);
for (const oid of [1182, 1115, 1185, 1187]) types.setTypeParser(oid, textArray);
/** Names for this server's own statements: none through a transaction pooler. */
const named = process.env.BENCH_UNNAMED !== '1';
const pool = new pg.Pool({ connectionString: url, max: Number(process.env.BENCH_POOL_MAX ?? 10), types });

// ---------- auth: sha256 per request, verified keys cached per process ----------

interface Principal {
  clinicId: number;
  country: string;
  scopes: Set<string>;
}

const KEY_TTL_MS = 5000;
const keyCache = new Map<string, { principal: Principal | null; until: number }>();

class HttpError extends Error {
  status: number;
  code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function authenticate(header: string | undefined): Promise<Principal> {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (!m) throw new HttpError(401, 'unauthenticated', 'Missing or malformed Authorization header.');
  const hash = createHash('sha256').update(m[1]).digest('hex');
  const now = Date.now();
  const hit = keyCache.get(hash);
  let principal = hit && hit.until > now ? hit.principal : undefined;
  if (principal === undefined) {
    const { rows } = await pool.query<{
      clinic_id: number;
      scopes: string[];
      revoked_at: string | null;
      country: string;
    }>({
      ...(named ? { name: 'raw_key' } : {}),
      text: `select k.clinic_id, k.scopes, k.revoked_at, c.country
       from api_key k join clinic c on c.id = k.clinic_id where k.hash = $1 limit 1`,
      values: [hash],
    });
    const row = rows[0];
    principal =
      row && !row.revoked_at
        ? { clinicId: row.clinic_id, country: row.country, scopes: new Set(row.scopes) }
        : null;
    if (keyCache.size > 10_000) keyCache.clear();
    keyCache.set(hash, { principal, until: now + KEY_TTL_MS });
  }
  if (!principal) throw new HttpError(401, 'unauthenticated', 'Invalid or revoked API key.');
  return principal;
}

function requireScope(p: Principal, scope: string) {
  if (!p.scopes.has(scope)) throw new HttpError(403, 'forbidden', `This key lacks ${scope}.`);
}

// ---------- the app's statements, as captured ----------

const captured = (JSON.parse(readFileSync(process.env.BENCH_STATEMENTS ?? '', 'utf8')) as CapturedShapes)
  .shapes;

/**
 * The app's statements for a request of this shape, exactly as it ran them (text, name or none,
 * rows as arrays or objects); `count` is how many this server's code for the shape runs. A
 * shape the app runs otherwise is a 500 naming the difference: the check then fails until this
 * server's code follows the app's.
 */
function statementsOf(shape: string, count: number): CapturedStatement[] {
  const list = captured[shape];
  if (!list) throw new HttpError(500, 'not_captured', `No statements of the app captured for ${shape}.`);
  if (list.length !== count)
    throw new HttpError(
      500,
      'capture_mismatch',
      `The app runs ${list.length} statements for ${shape}; the raw server's code runs ${count}.`,
    );
  return list;
}

/** What this server ran while the harness traced (bench/patients.ts compares it with the app's). */
let tracing: CapturedStatement[] | null = null;

/**
 * One captured statement with this request's values, rows as arrays with each column's position
 * by name (`c.<column>`), worked out once per statement.
 */
const positions = new Map<string, Record<string, number>>();
async function run(
  statement: { name?: string | null; text: string; rowMode?: string | null },
  values: unknown[],
  on: pg.Pool | pg.PoolClient = pool,
) {
  const config = {
    ...(statement.name ? { name: statement.name } : {}),
    text: statement.text,
    values,
    rowMode: 'array' as const,
  };
  if (tracing) tracing.push({ ...describeQuery(config), rowMode: statement.rowMode ?? 'array' });
  const res = await on.query<any[]>(config);
  let c = positions.get(statement.text);
  if (!c) {
    c = Object.fromEntries(res.fields.map((f, i) => [f.name, i]));
    positions.set(statement.text, c);
  }
  return { rows: res.rows, c };
}

// ---------- GET /v1/patients ----------

function parseLimit(raw: string | null): number {
  if (raw == null || raw === '') return 25;
  const n = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(n >= 1 && n <= 100))
    throw new HttpError(422, 'validation_failed', 'limit must be an integer from 1 to 100.');
  return n;
}

const cursorOf = (id: number) => Buffer.from(JSON.stringify(['pat', id])).toString('base64url');
const isoText = (v: string | null) => (v == null ? null : pgTimestampToIso(v, (t) => new Date(t)));

/** The list, the phone lookup and the name search: the app's one statement, its values in the app's order. */
async function listPatients(p: Principal, u: URL, shape: string) {
  requireScope(p, 'patients:read');
  const q = u.searchParams;
  if (q.has('cursor') || q.has('email'))
    throw new HttpError(422, 'validation_failed', 'The raw server serves the bench cases only.');
  const limit = parseLimit(q.get('limit'));
  const values: unknown[] = [];
  const phone = q.get('phone');
  if (phone) {
    const e164 = toE164(phone, p.country);
    if (!e164) throw new HttpError(422, 'validation_failed', `phone '${phone}' is not a phone number.`);
    values.push(e164);
  }
  const query = q.get('query');
  if (query?.trim()) {
    const pattern = `${escapeLike(foldForSearch(query))}%`;
    values.push(pattern, pattern);
  }
  values.push(p.clinicId, limit + 1);
  const [statement] = statementsOf(shape, 1);
  const { rows, c } = await run(statement, values);
  const items = rows.length > limit ? rows.slice(0, limit) : rows;
  return {
    data: items.map((r) => ({
      id: `pat_${r[c.id]}`,
      first_name: r[c.first_name],
      last_name: r[c.last_name],
      phone: toLocal(r[c.phone], p.country),
      email: r[c.email],
      gender: r[c.gender],
      birth_date: r[c.birth_date],
      status:
        r[c.j_status__id] == null
          ? null
          : { id: `pst_${r[c.j_status__id]}`, name: r[c.j_status__name], color: r[c.j_status__color] },
      created_at: isoText(r[c.created_at]),
      updated_at: isoText(r[c.updated_at]),
    })),
    next_cursor: rows.length > limit ? cursorOf(items[items.length - 1][c.id]) : null,
  };
}

// ---------- POST /graphql: patients(first: N) with owner, species and appointments(first: 5) ----------

/** The benchmark's documents this server answers, by text: `patients(first: N)`, appointments(first: M). */
const DOCUMENT =
  /^\{ patients\(first: (\d+)\) \{ edges \{ node \{ id firstName lastName phone owner \{ id firstName \} species \{ id name \} appointments\(first: (\d+)\) \{ edges \{ node \{ id start end status \{ name \} \} \} \} \} \} \} \}$/;

/** The app's two statements: the page with owner and species joined, then the page's appointments. */
async function graphqlPatients(p: Principal, first: number, appointmentsFirst: number, shape: string) {
  requireScope(p, 'patients:read');
  requireScope(p, 'appointments:read');
  const [pageStatement, appointmentsStatement] = statementsOf(shape, 2);
  const { rows: patients, c } = await run(pageStatement, [p.clinicId, first + 1]);
  const page = patients.length > first ? patients.slice(0, first) : patients;
  const { rows: appointments, c: a } = await run(appointmentsStatement, [
    `{${page.map((r) => r[c.id]).join(',')}}`,
    p.clinicId,
    appointmentsFirst + 1,
    p.clinicId,
  ]);
  const byPatient = new Map<number, any[][]>();
  for (const r of appointments) {
    const list = byPatient.get(r[a.patient_id]);
    if (list) list.push(r);
    else byPatient.set(r[a.patient_id], [r]);
  }
  return {
    data: {
      patients: {
        edges: page.map((r) => ({
          node: {
            id: `pat_${r[c.id]}`,
            firstName: r[c.first_name],
            lastName: r[c.last_name],
            phone: toLocal(r[c.phone], p.country),
            owner:
              r[c.j_owner__id] == null
                ? null
                : { id: `own_${r[c.j_owner__id]}`, firstName: r[c.j_owner__first_name] },
            species:
              r[c.j_species__id] == null
                ? null
                : { id: `spc_${r[c.j_species__id]}`, name: r[c.j_species__name] },
            appointments: {
              edges: (byPatient.get(r[c.id]) ?? []).slice(0, appointmentsFirst).map((x) => ({
                node: {
                  id: `appt_${x[a.id]}`,
                  start: isoText(x[a.start_at]),
                  end: isoText(x[a.end_at]),
                  status: x[a.j_status__id] == null ? null : { name: x[a.j_status__name] },
                },
              })),
            },
          },
        })),
      },
    },
  };
}

// ---------- GET /v1/chat/messages and /v1/chat/conversations ----------

const DAY_MS = 24 * 3600_000;

/** The patients of each row's phone, one statement for the page, as the app attaches them. */
async function patientsOf(p: Principal, phones: string[], statement: CapturedStatement) {
  const unique = [...new Set(phones)];
  const by = new Map<
    string,
    { id: string; first_name: string | null; last_name: string | null; phone: string | null }[]
  >();
  if (!unique.length) return by;
  const { rows, c } = await run(statement, [`{${unique.map((x) => `"${x}"`).join(',')}}`, p.clinicId]);
  for (const r of rows) {
    const list = by.get(r[c.phone]) ?? [];
    list.push({
      id: `pat_${r[c.id]}`,
      first_name: r[c.first_name],
      last_name: r[c.last_name],
      phone: toLocal(r[c.phone], p.country),
    });
    by.set(r[c.phone], list);
  }
  return by;
}

const cursorOfValues = (values: unknown[]) => Buffer.from(JSON.stringify(values)).toString('base64url');

async function listMessages(p: Principal, q: URLSearchParams, shape: string) {
  requireScope(p, 'chat:read');
  const [page, patientsByPhone] = statementsOf(shape, 2);
  const limit = parseLimit(q.get('limit'));
  const since = q.get('updated_since');
  const sinceIso = since ? new Date(since).toISOString() : null;
  const { rows, c } = sinceIso
    ? await run(page, [sinceIso, p.clinicId, sinceIso, p.clinicId, limit + 1])
    : await run(page, [p.clinicId, limit + 1]);
  const items = rows.length > limit ? rows.slice(0, limit) : rows;
  const patients = await patientsOf(
    p,
    items.map((r) => r[c.patient_phone]),
    patientsByPhone,
  );
  const last = items[items.length - 1];
  return {
    data: items.map((r) => {
      const outbound = r[c.direction] === 'outbound';
      const t = {
        sent_at: isoText(r[c.sent_at]),
        delivered_at: isoText(r[c.delivered_at]),
        read_at: isoText(r[c.read_at]),
        failed_at: isoText(r[c.failed_at]),
      };
      const status = !outbound
        ? 'received'
        : t.failed_at
          ? 'failed'
          : t.read_at
            ? 'read'
            : t.delivered_at
              ? 'delivered'
              : t.sent_at
                ? 'sent'
                : 'queued';
      const phone = (v: string | null) => (outbound ? toInternational(v) : toLocal(v, p.country));
      return {
        id: `${outbound ? 'out' : 'in'}_${r[c.id]}`,
        conversation_id: `conv_${r[c.conversation_id]}`,
        direction: r[c.direction],
        type: r[c.type],
        status,
        from_phone: phone(r[c.from_phone]),
        to_phone: phone(r[c.to_phone]),
        patient_phone: toLocal(r[c.patient_phone], p.country),
        text: r[c.text],
        media: { available: r[c.media_path] != null, type: r[c.media_type] ?? null },
        patients: patients.get(r[c.patient_phone]) ?? [],
        template: r[c.template_name],
        replied_to_id: r[c.replied_to_id] == null ? null : `out_${r[c.replied_to_id]}`,
        reactions: { patient: r[c.reaction_patient] ?? null, clinic: r[c.reaction_clinic] ?? null },
        failure_reason: r[c.failure_reason],
        timestamps: outbound ? t : null,
        created_at: isoText(r[c.created_at]),
        updated_at: isoText(r[c.updated_at]),
      };
    }),
    next_cursor:
      rows.length > limit
        ? sinceIso
          ? cursorOfValues(['msgsync', Number(last[c.seq]), last[c.id]])
          : cursorOfValues(['msg', isoText(last[c.created_at]), last[c.id]])
        : null,
  };
}

async function listConversations(p: Principal, q: URLSearchParams, shape: string) {
  requireScope(p, 'chat:read');
  const [page, patientsByPhone] = statementsOf(shape, 2);
  const limit = parseLimit(q.get('limit'));
  const { rows, c } = await run(page, [p.clinicId, limit + 1]);
  const items = rows.length > limit ? rows.slice(0, limit) : rows;
  const patients = await patientsOf(
    p,
    items.map((r) => r[c.patient_phone]),
    patientsByPhone,
  );
  const now = Date.now();
  const last = items[items.length - 1];
  return {
    data: items.map((r) => {
      const closes =
        r[c.last_inbound_at] == null
          ? null
          : new Date(isoText(r[c.last_inbound_at]) as string).getTime() + DAY_MS;
      return {
        id: `conv_${r[c.id]}`,
        display_name: r[c.display_name],
        patient_phone: toLocal(r[c.patient_phone], p.country),
        clinic_phone: toInternational(r[c.clinic_phone]),
        last_message_preview: r[c.last_message_preview],
        last_activity_at: isoText(r[c.last_activity_at]),
        last_inbound_at: isoText(r[c.last_inbound_at]),
        last_outbound_at: isoText(r[c.last_outbound_at]),
        is_handled: r[c.is_handled],
        free_text_window_expires_at: closes != null && closes > now ? new Date(closes).toISOString() : null,
        patients: patients.get(r[c.patient_phone]) ?? [],
        created_at: isoText(r[c.created_at]),
        updated_at: isoText(r[c.updated_at]),
      };
    }),
    next_cursor:
      rows.length > limit ? cursorOfValues(['conv', isoText(last[c.last_activity_at]), last[c.id]]) : null,
  };
}

// ---------- POST /v1/appointments: the booking and its event, one transaction ----------

const booking = Object.fromEntries(
  Object.entries(bookingSql).map(([k, sql]) => [
    k,
    { ...(named ? { name: `raw_booking_${k}` } : {}), text: numberPlaceholders(sql) },
  ]),
) as Record<keyof typeof bookingSql, { name?: string; text: string }>;

/**
 * An INSERT's parameters in the order of its pinned column list (the app builds that list from the
 * entity), by column name.
 */
function valuesByColumn(sql: string, values: Record<string, unknown>): unknown[] {
  const list = /^insert into "[^"]+" \(([^)]*)\)/.exec(sql)?.[1] ?? '';
  return list.split(', ').map((quoted) => {
    const column = quoted.slice(1, -1);
    // A column the booking gives no value (one added since, like the app's bodies without it) is null,
    // as the app's INSERT has it; a NOT NULL one fails the raw booking loudly.
    return column in values ? values[column] : null;
  });
}

/** The lock space of the app's per-provider booking lock (src/services/appointments/appointment-writes.ts). */
const PROVIDER_LOCKS = 0x61707074;
const BOOKING_FIELDS = new Set(['patient_id', 'branch_id', 'provider_id', 'type_id', 'start', 'note']);
// The app's `instant` (src/services/write-input.ts): ISO 8601 with an offset.
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/;

const invalidField = (param: string, message: string) =>
  new HttpError(422, 'validation_failed', `${param}: ${message}`);

function idField(body: Record<string, unknown>, param: string, prefix: string): number {
  const v = body[param];
  const m = typeof v === 'string' ? /^([a-z]+)_(\d{1,9})$/.exec(v) : null;
  if (!m || m[1] !== prefix) throw invalidField(param, `must be an id like ${prefix}_1.`);
  return Number(m[2]);
}

/** The fields the bench sends, checked as the app checks them (the rest of the app's body is not offered). */
function bookingInput(text: string) {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new HttpError(400, 'invalid_json', 'The body is not JSON.');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw new HttpError(422, 'validation_failed', 'The body must be a JSON object.');
  const b = body as Record<string, unknown>;
  for (const k of Object.keys(b)) if (!BOOKING_FIELDS.has(k)) throw invalidField(k, 'unknown field.');
  const start = typeof b.start === 'string' && INSTANT.test(b.start) ? new Date(b.start) : null;
  if (!start || Number.isNaN(start.getTime()))
    throw invalidField('start', 'must be ISO 8601 with an offset.');
  if (b.note != null && (typeof b.note !== 'string' || b.note.length > 4000))
    throw invalidField('note', 'must be text of at most 4000 characters.');
  return {
    patient: idField(b, 'patient_id', 'pat'),
    branch: idField(b, 'branch_id', 'br'),
    provider: idField(b, 'provider_id', 'prv'),
    type: idField(b, 'type_id', 'apt'),
    start,
    note: (b.note as string | null | undefined) ?? null,
  };
}

/** The detailed appointment, as the app presents it, from a row of `bookingSql.detailed`. */
function presentAppointment(r: any[], c: Record<string, number>, country: string) {
  return {
    id: `appt_${r[c.id]}`,
    patient: {
      id: `pat_${r[c.j_patient__id]}`,
      first_name: r[c.j_patient__first_name],
      last_name: r[c.j_patient__last_name],
      phone: toLocal(r[c.j_patient__phone], country),
    },
    branch: { id: `br_${r[c.j_branch__id]}`, name: r[c.j_branch__name] },
    provider:
      r[c.j_provider__id] == null ? null : { id: `prv_${r[c.j_provider__id]}`, name: r[c.j_provider__name] },
    type: r[c.j_type__id] == null ? null : { id: `apt_${r[c.j_type__id]}`, name: r[c.j_type__name] },
    status:
      r[c.j_status__id] == null
        ? null
        : { id: `aps_${r[c.j_status__id]}`, name: r[c.j_status__name], color: r[c.j_status__color] },
    start: isoText(r[c.start_at]),
    end: isoText(r[c.end_at]),
    note: r[c.note],
    cancelled_at: isoText(r[c.cancelled_at]),
    cancellation_reason: r[c.cancellation_reason],
    created_at: isoText(r[c.created_at]),
    updated_at: isoText(r[c.updated_at]),
  };
}

/**
 * What the app's booking does, in one transaction: the references checked, the provider's
 * bookings serialised (advisory lock), the overlap looked for, the insert, the appointment read
 * back as GET answers it, the event row with that as `data`, commit. Answers 201 `{data}` and
 * the ETag (updated_at in ms). No Idempotency-Key (the bench sends none) and no retry of a lost
 * race (the exclusion constraint's 23P01 is a 409 here).
 */
async function bookAppointment(p: Principal, text: string) {
  requireScope(p, 'appointments:write');
  const input = bookingInput(text);
  const now = new Date();
  const client = await pool.connect();
  try {
    await client.query('begin');
    const [refs] = (
      await client.query<Record<string, number[] | null>>({
        ...booking.references,
        values: [
          PROVIDER_LOCKS,
          p.clinicId,
          input.provider,
          p.clinicId,
          input.patient,
          p.clinicId,
          input.branch,
          p.clinicId,
          input.provider,
          p.clinicId,
          input.type,
        ],
      })
    ).rows;
    const fields = ['patient_id', 'branch_id', 'provider_id', 'type_id'];
    fields.forEach((field, i) => {
      const found = refs[`r${i}`];
      if (!found) throw invalidField(field, 'no such record at this clinic.');
      if (found[0] === 2) throw invalidField(field, 'that entry is disabled.');
    });
    const duration = (refs.r3 as number[])[1];
    const end = new Date(input.start.getTime() + duration * 60_000);
    const other = await client.query<{ id: number }>({
      ...booking.overlap,
      values: [p.clinicId, input.provider, input.start, end, 0],
    });
    if (other.rows.length)
      throw new HttpError(
        409,
        'conflict',
        `The provider has another active appointment at that time (appt_${other.rows[0].id}).`,
      );
    // The app's default status and working week (the bench's provider keeps no hours).
    const rules = await client.query<{ default_status: number | null }>({
      ...booking.bookingRules,
      values: [p.clinicId, p.clinicId, p.clinicId, input.provider],
    });
    const inserted = await client.query<{ id: number }>({
      ...booking.insertAppointment,
      values: valuesByColumn(bookingSql.insertAppointment, {
        clinic_id: p.clinicId,
        patient_id: input.patient,
        branch_id: input.branch,
        provider_id: input.provider,
        type_id: input.type,
        status_id: rules.rows[0].default_status,
        start_at: input.start,
        end_at: end,
        note: input.note,
        cancelled_at: null,
        cancellation_reason: null,
        created_at: now,
        updated_at: now,
      }),
    });
    const id = inserted.rows[0].id;
    const { rows, c } = await run(booking.detailed, [`{${id}}`, p.clinicId], client);
    const data = presentAppointment(rows[0], c, p.country);
    await client.query({
      ...booking.insertEvent,
      values: [p.clinicId, 'appointment.created', 'appointments:read', JSON.stringify(data), now, p.clinicId],
    });
    await client.query('commit');
    return data;
  } catch (e) {
    await client.query('rollback').catch(() => {});
    if ((e as { code?: string }).code === '23P01')
      throw new HttpError(409, 'conflict', 'The provider has another active appointment at that time.');
    throw e;
  } finally {
    client.release();
  }
}

// ---------- HTTP ----------

function send(res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

async function handle(req: IncomingMessage, res: ServerResponse) {
  const u = new URL(req.url ?? '/', 'http://127.0.0.1');
  if (u.pathname === '/v1/patients' && req.method === 'GET') {
    const p = await authenticate(req.headers.authorization);
    return send(res, 200, await listPatients(p, u, requestShape('GET', u)));
  }
  if (u.pathname === '/v1/chat/messages' && req.method === 'GET') {
    const p = await authenticate(req.headers.authorization);
    return send(res, 200, await listMessages(p, u.searchParams, requestShape('GET', u)));
  }
  if (u.pathname === '/v1/chat/conversations' && req.method === 'GET') {
    const p = await authenticate(req.headers.authorization);
    return send(res, 200, await listConversations(p, u.searchParams, requestShape('GET', u)));
  }
  if (u.pathname === '/v1/appointments' && req.method === 'POST') {
    const p = await authenticate(req.headers.authorization);
    const data = await bookAppointment(p, await readBody(req));
    return send(res, 201, { data }, { etag: `"${new Date(data.updated_at as string).getTime()}"` });
  }
  if (u.pathname === '/graphql' && req.method === 'POST') {
    const p = await authenticate(req.headers.authorization);
    // The document is one of the benchmark's; it is read and parsed as JSON, not as GraphQL.
    const body = JSON.parse(await readBody(req)) as { query?: unknown };
    const m = typeof body.query === 'string' ? DOCUMENT.exec(body.query) : null;
    if (!m) throw new HttpError(400, 'invalid_request', 'Not one of the benchmark documents.');
    const shape = requestShape('POST', u, body.query as string);
    return send(res, 200, await graphqlPatients(p, Number(m[1]), Number(m[2]), shape));
  }
  throw new HttpError(404, 'not_found', `No route ${req.method} ${u.pathname}.`);
}

const server = createServer((req, res) => {
  handle(req, res).catch((e: unknown) => {
    if (res.headersSent) return;
    if (e instanceof HttpError) send(res, e.status, { error: { code: e.code, message: e.message } });
    else {
      console.error(e);
      send(res, 500, { error: { code: 'internal_error', message: 'Something went wrong.' } });
    }
  });
});
server.keepAliveTimeout = 65_000;
await new Promise<void>((resolve, reject) => {
  server.once('error', reject);
  server.listen(0, '127.0.0.1', () => resolve());
});
const { port } = server.address() as AddressInfo;

// The harness traces the statements of one request: 'trace-start', the request, 'trace-stop'.
process.on('message', (m: { type?: string }) => {
  if (m?.type === 'trace-start') {
    tracing = [];
    process.send?.({ type: 'trace-started' });
  } else if (m?.type === 'trace-stop') {
    process.send?.({ type: 'traced', statements: tracing ?? [] });
    tracing = null;
  }
});

serveUntilParentLeaves(`http://127.0.0.1:${port}`, async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await pool.end();
});
