import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runCli } from './run-cli.ts';

/**
 * The CLI as users run it: a child process on Node 24 with DATABASE_URL pointing at an empty
 * database of this file's own (not the migrated template: the CLI must migrate it itself).
 */
const TIMEOUT = 60_000;

function adminUrl(): string {
  // The global setup knows the test server (DATABASE_URL's or an embedded one); without it,
  // DATABASE_URL's server, else the local one.
  const provided: string | undefined = inject('adminUrl');
  if (provided) return provided;
  if (process.env.DATABASE_URL) {
    const u = new URL(process.env.DATABASE_URL);
    u.pathname = '/postgres';
    return u.toString();
  }
  return 'postgresql://postgres@127.0.0.1:5432/postgres';
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>, url = adminUrl()): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

async function emptyDatabase() {
  const name = `cg_cli_${randomBytes(5).toString('hex')}`;
  await admin((c) => c.query(`create database "${name}"`));
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    query: (sql: string, params: unknown[] = []) =>
      admin(async (c) => (await c.query(sql, params)).rows, url.toString()),
    drop: () => admin((c) => c.query(`drop database if exists "${name}" with (force)`)),
  };
}

type Db = Awaited<ReturnType<typeof emptyDatabase>>;

const cli = (db: Db, ...args: string[]) => runCli(args, { DATABASE_URL: db.url });

/** Runs a --json command that must succeed and print exactly one JSON object on stdout. */
async function cliJson(db: Db, ...args: string[]): Promise<any> {
  const res = await cli(db, '--json', ...args);
  expect(res.code, res.stderr).toBe(0);
  expect(res.stdout.trim().split('\n')).toHaveLength(1);
  return JSON.parse(res.stdout);
}

describe('cli: clinics and keys', () => {
  let db: Db;
  let clinicId: string;

  beforeAll(async () => {
    db = await emptyDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('migrates an empty database, then has nothing left to apply', { timeout: TIMEOUT }, async () => {
    const first = await cliJson(db, 'migrate');
    expect(first.applied.length).toBeGreaterThan(0);
    expect(await cliJson(db, 'migrate')).toEqual({ applied: [] });
  });

  it('creates a clinic and prints it as one JSON object', { timeout: TIMEOUT }, async () => {
    const c = await cliJson(
      db,
      'clinic',
      'create',
      '--name',
      'Smile Dental',
      '--kind',
      'dental',
      '--mode',
      'test',
      '--country',
      'il',
      '--phone',
      '050-123 4567',
      '--handled-marking',
    );
    expect(c).toMatchObject({
      name: 'Smile Dental',
      kind: 'dental',
      mode: 'test',
      country: 'IL',
      phone: '+972501234567',
      handled_marking_enabled: true,
    });
    expect(c.id).toMatch(/^cln_\d+$/);
    clinicId = c.id;
  });

  it('lists clinics as {data}', { timeout: TIMEOUT }, async () => {
    const list = await cliJson(db, 'clinic', 'list');
    expect(list.data).toEqual([
      expect.objectContaining({ id: clinicId, name: 'Smile Dental', kind: 'dental' }),
    ]);
  });

  it('rejects an invalid kind through commander, before touching the database', {
    timeout: TIMEOUT,
  }, async () => {
    const res = await cli(
      db,
      'clinic',
      'create',
      '--name',
      'X',
      '--kind',
      'cat',
      '--mode',
      'test',
      '--country',
      'IL',
    );
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/dental, veterinary/);
    expect(res.stdout).toBe('');
  });

  it('rejects a country code that names no country', { timeout: TIMEOUT }, async () => {
    const res = await cli(
      db,
      'clinic',
      'create',
      '--name',
      'X',
      '--kind',
      'dental',
      '--mode',
      'test',
      '--country',
      'ZZ',
    );
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/country must be an ISO 3166 alpha-2 country code/);
  });

  it('creates a key, prints it once and stores only its hash', { timeout: TIMEOUT }, async () => {
    const k = await cliJson(
      db,
      'key',
      'create',
      '--clinic',
      clinicId,
      '--scopes',
      'patients:read, catalog:read',
      '--name',
      'Reception',
    );
    expect(k.id).toMatch(/^key_\d+$/);
    expect(k.scopes).toEqual(['patients:read', 'catalog:read']);
    expect(k.key).toMatch(/^cg_test_/);
    const rows = await db.query('select * from api_key');
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(k.key);
    expect(rows[0].hash).toBe(createHash('sha256').update(k.key).digest('hex'));
  });

  it('refuses chat:read together with chat:write', { timeout: TIMEOUT }, async () => {
    const res = await cli(
      db,
      '--json',
      'key',
      'create',
      '--clinic',
      clinicId,
      '--scopes',
      'chat:read,chat:write',
      '--name',
      'Both',
    );
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toContain('chat:read and chat:write cannot be granted on the same key.');
    expect(await db.query('select id from api_key')).toHaveLength(1);
  });

  it('revokes a key; revoking an unknown key fails', { timeout: TIMEOUT }, async () => {
    const k = await cliJson(
      db,
      'key',
      'create',
      '--clinic',
      clinicId,
      '--scopes',
      'chat:write',
      '--name',
      'Sender',
    );
    expect(await cliJson(db, 'key', 'revoke', k.id)).toEqual({ id: k.id, revoked: true });
    const list = await cliJson(db, 'key', 'list', '--clinic', clinicId);
    expect(list.data.find((x: any) => x.id === k.id).revoked_at).toEqual(expect.any(String));
    expect(list.data.filter((x: any) => x.revoked_at === null)).toHaveLength(1);
    expect(JSON.stringify(list)).not.toContain(k.key);

    const res = await cli(db, 'key', 'revoke', 'key_999999');
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("No API key with id 'key_999999'");
  });

  it('seeds bulk patients with appointments into an existing clinic', { timeout: TIMEOUT }, async () => {
    const res = await cliJson(db, 'seed', '--clinic', clinicId, '--patients', '200');
    expect(res).toMatchObject({ clinic_id: clinicId, patients: 200, owners: 0 });
    const [counts] = await db.query(
      `select count(*)::int as n,
              count(*) filter (where name_fl = '' or name_lf = '')::int as unfolded,
              count(*) filter (where phone is not null and phone !~ '^\\+9725[0-9]{8}$')::int as bad_phones
       from patient`,
    );
    expect(counts).toEqual({ n: 200, unfolded: 0, bad_phones: 0 });
    const [appts] = await db.query('select count(*)::int as n from appointment');
    expect(appts.n).toBe(res.appointments);
  });
});

describe('cli: the sandbox network and clinic settings', () => {
  let db: Db;
  let clinicId: string;

  beforeAll(async () => {
    db = await emptyDatabase();
    const c = await cliJson(
      db,
      'clinic',
      'create',
      '--name',
      'Chat',
      '--kind',
      'dental',
      '--mode',
      'test',
      '--country',
      'IL',
      '--phone',
      '03-555-0101',
    );
    clinicId = c.id;
  }, TIMEOUT);
  afterAll(async () => {
    await db?.drop();
  });

  it('network inbound records a patient message (one JSON object with id and conversation_id), react adds their reaction', {
    timeout: TIMEOUT,
  }, async () => {
    const first = await cliJson(
      db,
      'network',
      'inbound',
      '--clinic',
      clinicId,
      '--from',
      '050-700-0001',
      '--text',
      'Hi',
      '--name',
      'Dana',
    );
    expect(first).toMatchObject({
      status: 'recorded',
      id: expect.stringMatching(/^in_\d+$/),
      conversation_id: expect.stringMatching(/^conv_\d+$/),
    });
    const second = await cliJson(
      db,
      'network',
      'inbound',
      '--clinic',
      clinicId,
      '--from',
      '+972 50 700 0001',
      '--text',
      'Again',
    );
    expect(second.conversation_id).toBe(first.conversation_id);
    const [conv] = await db.query(
      'select display_name, last_inbound_at is not null as open from conversation',
    );
    expect(conv).toEqual({ display_name: 'Dana', open: true });
    const reacted = await cliJson(
      db,
      'network',
      'react',
      '--clinic',
      clinicId,
      '--message',
      first.id,
      '--emoji',
      '👍',
    );
    expect(reacted.id).toBe(first.id);
    const [m] = await db.query('select reaction_patient from message where id = $1', [
      Number(first.id.slice(3)),
    ]);
    expect(m.reaction_patient).toBe('👍');
    const templates = await db.query('select count(*)::int as n from template');
    expect(templates[0].n).toBeGreaterThan(5);
  });

  it('network inbound refuses a bad phone, media without its type, and an unknown reply-to', {
    timeout: TIMEOUT,
  }, async () => {
    const cases: [string[], RegExp][] = [
      [['--from', 'abc', '--text', 'x'], /from 'abc' is not a phone number/],
      [
        ['--from', '050-700-0002', '--media-url', 'https://example.com/a.png'],
        /media-url and media-type go together/,
      ],
      [
        ['--from', '050-700-0002', '--text', 'x', '--reply-to', 'out_999'],
        /reply-to 'out_999' is not an outbound message/,
      ],
    ];
    for (const [args, message] of cases) {
      const res = await cli(db, 'network', 'inbound', '--clinic', clinicId, ...args);
      expect(res.code, args.join(' ')).not.toBe(0);
      expect(res.stderr).toMatch(message);
      expect(res.stdout).toBe('');
    }
    const [{ n }] = await db.query(
      "select count(*)::int as n from message where patient_phone = '+972507000002'",
    );
    expect(n).toBe(0);
  });

  it('clinic update turns handled-marking on and off', { timeout: TIMEOUT }, async () => {
    expect(await cliJson(db, 'clinic', 'update', '--id', clinicId, '--handled-marking', 'off')).toEqual({
      id: clinicId,
      handled_marking_enabled: false,
      ai_transcription_enabled: false,
    });
    expect(
      (await cliJson(db, 'clinic', 'update', '--id', clinicId, '--handled-marking', 'on'))
        .handled_marking_enabled,
    ).toBe(true);
    const bad = await cli(db, 'clinic', 'update', '--id', clinicId, '--handled-marking', 'maybe');
    expect(bad.code).not.toBe(0);
  });
});

describe('cli: demo seed', () => {
  let db: Db;

  beforeAll(async () => {
    db = await emptyDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  const counts = async () =>
    (
      await db.query(
        `select (select count(*) from clinic)::int as clinics, (select count(*) from patient)::int as patients,
                (select count(*) from api_key)::int as keys, (select count(*) from appointment)::int as appointments`,
      )
    )[0];

  it('seeds the demo into an empty database, and only then', { timeout: TIMEOUT }, async () => {
    const demo = await cliJson(db, 'seed');
    expect(demo.seeded).toBe(true);
    expect(demo.clinics.map((c: any) => c.kind)).toEqual(['dental', 'veterinary']);
    const keys = Object.values(demo.keys) as { key: string }[];
    expect(new Set(keys.map((k) => k.key)).size).toBe(4);
    const scopes = await db.query('select name, scopes from api_key order by id');
    // The reading key reads; webhooks:manage goes with the clinic writes (as the README lists them).
    expect(scopes[0].scopes).not.toContain('webhooks:manage');
    expect(scopes[0].scopes).toContain('chat:read');
    expect(scopes[0].scopes).not.toContain('chat:write');
    expect(scopes[1].scopes).toEqual(['chat:write']);
    // The clinic-writes key: every write but chat's, with chat:read (never beside chat:write).
    expect(scopes[3].scopes).toEqual(
      expect.arrayContaining(['appointments:write', 'catalog:write', 'webhooks:manage']),
    );
    expect(scopes[3].scopes).not.toContain('chat:write');
    expect(await db.query("select 1 from patient where name_fl like 'eva %'")).not.toHaveLength(0);

    const before = await counts();
    expect(before).toMatchObject({ clinics: 2, patients: 80, keys: 4 });
    const again = await cliJson(db, 'seed');
    expect(again.seeded).toBe(false);
    expect(await counts()).toEqual(before);
  });

  it('gives bulk animals at the veterinary clinic owners, species and the owner phone', {
    timeout: TIMEOUT,
  }, async () => {
    const res = await cliJson(db, 'seed', '--clinic', 'cln_2', '--patients', '30');
    expect(res.owners).toBeGreaterThan(0);
    const rows = await db.query(
      `select p.phone, o.phone as owner_phone, p.species_id, b.species_id as breed_species
       from patient p join owner o on o.id = p.owner_id left join breed b on b.id = p.breed_id
       where p.clinic_id = 2 order by p.id desc limit 30`,
    );
    expect(rows).toHaveLength(30);
    for (const r of rows) {
      expect(r.phone).toBe(r.owner_phone);
      expect(r.species_id).not.toBeNull();
      if (r.breed_species != null) expect(r.breed_species).toBe(r.species_id);
    }
  });
});
