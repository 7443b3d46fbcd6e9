/**
 * The raw baseline: what the benchmarked endpoints cost with no framework at all.
 *
 * The chat pages (GET /v1/chat/messages, with or without updated_since, and
 * GET /v1/chat/conversations) run exactly the app's statements (bench/chat-sql.ts, held to the
 * app's by test/bench-sql.test.ts) as named prepared statements, with timestamps read as text
 * as the app reads them; only the presenting is hand-written.
 * A hand-written
 * `node:http` handler over a `pg` Pool (same size as the app's ORM pool) running the SQL the app
 * runs and answering with the same JSON (bench/patients.ts checks that before timing):
 *
 *   GET  /v1/patients?limit&cursor&query&phone   the REST list / name search / phone lookup
 *   POST /graphql                                 the benchmark's one GraphQL document, hard-wired
 *   POST /v1/appointments                         a booking and its event in one transaction: the
 *        app's statements (bench/booking-sql.ts, held to the app's by test/bench-sql.test.ts) as
 *        named prepared statements, except one statement for the four reference checks
 *
 * Like the app it hashes the API key on every request and keeps verified keys in a Map for 5 s,
 * formats phones with the same libphonenumber helper and pages by keyset (`id > cursor`,
 * limit + 1). Unlike the app it selects only the columns it returns, uses no request ids, no
 * logging and no GraphQL parsing: it is the floor, not a competitor.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { numberPlaceholders } from '../src/db/named-statements.ts';
import { toE164, toInternational, toLocal } from '../src/lib/phone.ts';
import { escapeLike, foldForSearch } from '../src/lib/text.ts';
import { pgTimestampToIso } from '../src/lib/timestamps.ts';
import { bookingSql } from './booking-sql.ts';
import { chatSql } from './chat-sql.ts';
import { serveUntilParentLeaves } from './child.ts';

const url = process.env.BENCH_DATABASE_URL;
if (!url) throw new Error('BENCH_DATABASE_URL is not set');

const pool = new pg.Pool({ connectionString: url, max: Number(process.env.BENCH_POOL_MAX ?? 10) });
// Timestamps as PostgreSQL's text, as the app's pool reads them (MikroORM's type overrides).
const asText = (v: string) => v;
const chatTypes = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === 1184 || oid === 1114
      ? asText
      : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

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
      revoked_at: Date | null;
      country: string;
    }>(
      `select k.clinic_id, k.scopes, k.revoked_at, c.country
       from api_key k join clinic c on c.id = k.clinic_id where k.hash = $1 limit 1`,
      [hash],
    );
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

// ---------- GET /v1/patients ----------

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function parseLimit(raw: string | null): number {
  if (raw == null || raw === '') return 25;
  const n = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(n >= 1 && n <= 100))
    throw new HttpError(422, 'validation_failed', 'limit must be an integer from 1 to 100.');
  return n;
}

function parseCursor(raw: string | null): number | null {
  if (raw == null || raw === '') return null;
  try {
    const v = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    if (Array.isArray(v) && v.length === 2 && v[0] === 'pat' && Number.isSafeInteger(v[1])) return v[1];
  } catch {}
  throw new HttpError(422, 'validation_failed', 'cursor is not a cursor of this list.');
}

const cursorOf = (id: number) => Buffer.from(JSON.stringify(['pat', id])).toString('base64url');

interface PatientRow {
  id: number;
  first_name: string | null;
  last_name: string | null;
  phone: string | null;
  email: string | null;
  gender: string | null;
  birth_date: string | null;
  created_at: Date;
  updated_at: Date;
  status_id: number | null;
  status_name: string | null;
  status_color: string | null;
}

async function listPatients(p: Principal, q: URLSearchParams) {
  requireScope(p, 'patients:read');
  const limit = parseLimit(q.get('limit'));
  const after = parseCursor(q.get('cursor'));
  const params: unknown[] = [p.clinicId];
  const where = ['p.clinic_id = $1'];
  const phone = q.get('phone');
  if (phone) {
    const e164 = toE164(phone, p.country);
    if (!e164) throw new HttpError(422, 'validation_failed', `phone '${phone}' is not a phone number.`);
    params.push(e164);
    where.push(`p.phone = $${params.length}`);
  }
  const email = q.get('email');
  if (email) {
    params.push(email.trim().toLowerCase());
    where.push(`p.email_lower = $${params.length}`);
  }
  const query = q.get('query');
  if (query?.trim()) {
    params.push(`${escapeLike(foldForSearch(query))}%`);
    where.push(`(p.name_fl like $${params.length} or p.name_lf like $${params.length})`);
  }
  if (after != null) {
    params.push(after);
    where.push(`p.id > $${params.length}`);
  }
  params.push(limit + 1);
  const { rows } = await pool.query<PatientRow>(
    `select p.id, p.first_name, p.last_name, p.phone, p.email, p.gender, p.birth_date::text as birth_date,
            p.created_at, p.updated_at, s.id as status_id, s.name as status_name, s.color as status_color
     from patient p left join patient_status s on s.id = p.status_id
     where ${where.join(' and ')}
     order by p.id asc limit $${params.length}`,
    params,
  );
  const items = rows.length > limit ? rows.slice(0, limit) : rows;
  return {
    data: items.map((r) => ({
      id: `pat_${r.id}`,
      first_name: r.first_name,
      last_name: r.last_name,
      phone: toLocal(r.phone, p.country),
      email: r.email,
      gender: r.gender,
      birth_date: r.birth_date,
      status:
        r.status_id == null ? null : { id: `pst_${r.status_id}`, name: r.status_name, color: r.status_color },
      created_at: iso(r.created_at),
      updated_at: iso(r.updated_at),
    })),
    next_cursor: rows.length > limit ? cursorOf(items[items.length - 1].id) : null,
  };
}

// ---------- POST /graphql: patients(first: 25) with owner, species and appointments(first: 5) ----------

async function graphqlPatients(p: Principal, first: number, appointmentsFirst: number) {
  requireScope(p, 'patients:read');
  requireScope(p, 'appointments:read');
  const { rows: patients } = await pool.query<{
    id: number;
    first_name: string | null;
    last_name: string | null;
    phone: string | null;
    owner_id: number | null;
    species_id: number | null;
  }>(
    `select id, first_name, last_name, phone, owner_id, species_id
     from patient where clinic_id = $1 order by id asc limit $2`,
    [p.clinicId, first + 1],
  );
  const page = patients.slice(0, first);
  const ids = page.map((r) => r.id);
  const ownerIds = [...new Set(page.map((r) => r.owner_id).filter((x) => x != null))];
  const speciesIds = [...new Set(page.map((r) => r.species_id).filter((x) => x != null))];
  // The three batches go out together, as the app's DataLoaders do.
  const [owners, species, appointments] = await Promise.all([
    pool.query<{ id: number; first_name: string | null }>(
      'select id, first_name from owner where clinic_id = $1 and id = any($2::int[])',
      [p.clinicId, ownerIds],
    ),
    pool.query<{ id: number; name: string }>(
      'select id, name from species where clinic_id = $1 and id = any($2::int[])',
      [p.clinicId, speciesIds],
    ),
    // limit + 1 per patient, as a connection needs to know whether there is a next page.
    pool.query<{
      id: number;
      patient_id: number;
      start_at: Date;
      end_at: Date;
      branch_name: string;
      provider_name: string | null;
      type_name: string | null;
      status_name: string | null;
    }>(
      `select a.id, a.patient_id, a.start_at, a.end_at, b.name as branch_name, pr.name as provider_name,
              t.name as type_name, st.name as status_name
       from (
         select id, patient_id, branch_id, provider_id, type_id, status_id, start_at, end_at,
                row_number() over (partition by patient_id order by start_at desc, id desc) as rn
         from appointment where clinic_id = $1 and patient_id = any($2::int[])
       ) a
       join branch b on b.id = a.branch_id
       left join provider pr on pr.id = a.provider_id
       left join appointment_type t on t.id = a.type_id
       left join appointment_status st on st.id = a.status_id
       where a.rn <= $3
       order by a.patient_id, a.start_at desc, a.id desc`,
      [p.clinicId, ids, appointmentsFirst + 1],
    ),
  ]);
  const ownerById = new Map(owners.rows.map((o) => [o.id, o]));
  const speciesById = new Map(species.rows.map((s) => [s.id, s]));
  const apptsByPatient = new Map<number, typeof appointments.rows>();
  for (const a of appointments.rows) {
    const list = apptsByPatient.get(a.patient_id);
    if (list) list.push(a);
    else apptsByPatient.set(a.patient_id, [a]);
  }
  return {
    data: {
      patients: {
        edges: page.map((r) => {
          const o = r.owner_id == null ? undefined : ownerById.get(r.owner_id);
          const s = r.species_id == null ? undefined : speciesById.get(r.species_id);
          return {
            node: {
              id: `pat_${r.id}`,
              firstName: r.first_name,
              lastName: r.last_name,
              phone: toLocal(r.phone, p.country),
              owner: o ? { id: `own_${o.id}`, firstName: o.first_name } : null,
              species: s ? { id: `spc_${s.id}`, name: s.name } : null,
              appointments: {
                edges: (apptsByPatient.get(r.id) ?? []).slice(0, appointmentsFirst).map((a) => ({
                  node: {
                    id: `appt_${a.id}`,
                    start: a.start_at.toISOString(),
                    end: a.end_at.toISOString(),
                    status: a.status_name == null ? null : { name: a.status_name },
                  },
                })),
              },
            },
          };
        }),
      },
    },
  };
}

// ---------- GET /v1/chat/messages and /v1/chat/conversations ----------

const named = Object.fromEntries(
  Object.entries(chatSql).map(([k, sql]) => [k, { name: `raw_chat_${k}`, text: numberPlaceholders(sql) }]),
) as Record<keyof typeof chatSql, { name: string; text: string }>;

/**
 * Rows as arrays, as the app reads them (src/db/named-statements.ts), with each column's
 * position by name (`c.<column>`), worked out once per statement.
 */
const positions = new Map<string, Record<string, number>>();
async function run(
  statement: { name: string; text: string },
  values: unknown[],
  on: pg.Pool | pg.PoolClient = pool,
) {
  const res = await on.query<any[]>({ ...statement, values, types: chatTypes, rowMode: 'array' });
  let c = positions.get(statement.name);
  if (!c) {
    c = Object.fromEntries(res.fields.map((f, i) => [f.name, i]));
    positions.set(statement.name, c);
  }
  return { rows: res.rows, c };
}

const isoText = (v: string | null) => (v == null ? null : pgTimestampToIso(v, (t) => new Date(t)));
const DAY_MS = 24 * 3600_000;

/** The patients of each row's phone, one statement for the page, as the app attaches them. */
async function patientsOf(p: Principal, phones: string[]) {
  const unique = [...new Set(phones)];
  const by = new Map<
    string,
    { id: string; first_name: string | null; last_name: string | null; phone: string | null }[]
  >();
  if (!unique.length) return by;
  const { rows, c } = await run(named.patientsByPhone, [
    `{${unique.map((x) => `"${x}"`).join(',')}}`,
    p.clinicId,
  ]);
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

async function listMessages(p: Principal, q: URLSearchParams) {
  requireScope(p, 'chat:read');
  const limit = parseLimit(q.get('limit'));
  const since = q.get('updated_since');
  const sinceIso = since ? new Date(since).toISOString() : null;
  const { rows, c } = sinceIso
    ? await run(named.messagesSync, [sinceIso, p.clinicId, sinceIso, p.clinicId, limit + 1])
    : await run(named.messages, [p.clinicId, limit + 1]);
  const items = rows.length > limit ? rows.slice(0, limit) : rows;
  const patients = await patientsOf(
    p,
    items.map((r) => r[c.patient_phone]),
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

async function listConversations(p: Principal, q: URLSearchParams) {
  requireScope(p, 'chat:read');
  const limit = parseLimit(q.get('limit'));
  const { rows, c } = await run(named.conversations, [p.clinicId, limit + 1]);
  const items = rows.length > limit ? rows.slice(0, limit) : rows;
  const patients = await patientsOf(
    p,
    items.map((r) => r[c.patient_phone]),
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
    { name: `raw_booking_${k}`, text: numberPlaceholders(sql) },
  ]),
) as Record<keyof typeof bookingSql, { name: string; text: string }>;

/**
 * An INSERT's parameters in the order of its pinned column list (the app builds that list from the
 * entity), by column name: a column the app adds makes this throw until it is given a value here.
 */
function valuesByColumn(sql: string, values: Record<string, unknown>): unknown[] {
  const list = /^insert into "[^"]+" \(([^)]*)\)/.exec(sql)?.[1] ?? '';
  return list.split(', ').map((quoted) => {
    const column = quoted.slice(1, -1);
    if (!(column in values)) throw new Error(`bench raw booking: no value for column ${column}.`);
    return values[column];
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
    return send(res, 200, await listPatients(p, u.searchParams));
  }
  if (u.pathname === '/v1/chat/messages' && req.method === 'GET') {
    const p = await authenticate(req.headers.authorization);
    return send(res, 200, await listMessages(p, u.searchParams));
  }
  if (u.pathname === '/v1/chat/conversations' && req.method === 'GET') {
    const p = await authenticate(req.headers.authorization);
    return send(res, 200, await listConversations(p, u.searchParams));
  }
  if (u.pathname === '/v1/appointments' && req.method === 'POST') {
    const p = await authenticate(req.headers.authorization);
    const data = await bookAppointment(p, await readBody(req));
    return send(res, 201, { data }, { etag: `"${new Date(data.updated_at as string).getTime()}"` });
  }
  if (u.pathname === '/graphql' && req.method === 'POST') {
    const p = await authenticate(req.headers.authorization);
    // The document is the benchmark's one query; it is read and parsed as JSON, not as GraphQL.
    const body = JSON.parse(await readBody(req)) as { query?: unknown };
    if (typeof body.query !== 'string') throw new HttpError(400, 'invalid_request', 'query is required.');
    return send(res, 200, await graphqlPatients(p, 25, 5));
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

serveUntilParentLeaves(`http://127.0.0.1:${port}`, async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await pool.end();
});
