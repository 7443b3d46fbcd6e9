import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runCli } from './run-cli.ts';

/**
 * `phone call` as users run it: a child process on an empty database of this file's own. It plays
 * one call through the same writes as the API, serving its recording from a loopback port of its
 * own, and prints each event as it is recorded, in the spec's order.
 */
const TIMEOUT = 60_000;

function adminUrl(): string {
  const provided: string | undefined = inject('adminUrl');
  if (provided) return provided;
  const u = new URL(process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres');
  u.pathname = '/postgres';
  return u.toString();
}

async function query(url: string, sql: string, params: unknown[] = []) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows;
  } finally {
    await c.end();
  }
}

let dbUrl: string;
let dbName: string;
let clinic: string;

const cli = (args: string[], env: Record<string, string> = {}) =>
  runCli(args, { DATABASE_URL: dbUrl, ...env });

beforeAll(async () => {
  dbName = `cg_phone_${randomBytes(5).toString('hex')}`;
  await query(adminUrl(), `create database "${dbName}"`);
  const u = new URL(adminUrl());
  u.pathname = `/${dbName}`;
  dbUrl = u.toString();
  const created = await cli([
    '--json',
    'clinic',
    'create',
    '--name',
    'Phone test',
    '--kind',
    'dental',
    '--mode',
    'test',
    '--country',
    'IL',
    '--phone',
    '03-555-0100',
  ]);
  expect(created.code, created.stderr).toBe(0);
  clinic = JSON.parse(created.stdout).id;
  const on = await cli(['--json', 'clinic', 'update', '--id', clinic, '--ai-transcription', 'on']);
  expect(JSON.parse(on.stdout).ai_transcription_enabled).toBe(true);
  await query(
    dbUrl,
    `insert into patient (clinic_id, first_name, last_name, phone, created_at, updated_at)
     values ($1, 'Dana', 'Cohen', '+972501234567', now(), now())`,
    [Number(clinic.split('_')[1])],
  );
}, TIMEOUT);

afterAll(async () => {
  await query(adminUrl(), `drop database if exists "${dbName}" with (force)`);
});

describe('phone call', () => {
  it('--json: the call, and call.completed, call.recording.available, call.transcript.completed in order, each with the call as it then was', {
    timeout: TIMEOUT,
  }, async () => {
    const r = await cli(
      [
        '--json',
        'phone',
        'call',
        '--clinic',
        clinic,
        '--from',
        '050-123-4567',
        '--answered',
        '--duration',
        '42',
        '--recording',
        '--transcript',
        'completed',
      ],
      { PHONE_CALL_DELAY_MS: '0' },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    const { data, events } = JSON.parse(r.stdout);
    expect(data).toMatchObject({
      id: expect.stringMatching(/^call_\d+$/),
      patient: { first_name: 'Dana', phone: '0501234567' },
      from: '0501234567',
      to: '035550100',
      duration: 42,
      answered: true,
      recorded: true,
      recording: { available: true },
      transcript: { status: 'completed', summary: expect.any(String) },
    });
    expect(data.transcript.segments.at(-1).end).toBeLessThanOrEqual(42);
    expect(events.map((e: any) => e.type)).toEqual([
      'call.completed',
      'call.recording.available',
      'call.transcript.completed',
    ]);
    expect(events.map((e: any) => [e.data.recording.available, e.data.transcript.status])).toEqual([
      [false, null],
      [true, null],
      [true, 'completed'],
    ]);
    expect(events[2].data).toEqual(data);
    // The progress went to stderr, one line per event, in order.
    expect(r.stderr.match(/call\.[a-z.]+/g)).toEqual(events.map((e: any) => e.type));
    // The service's own copy: a WAV kept in the media store.
    const [stored] = await query(
      dbUrl,
      `select m.mime, m.size, substring(m.bytes from 1 for 4) as head from call c join media_object m on c.recording_path = 'med_' || m.id where c.id = $1`,
      [Number(data.id.split('_')[1])],
    );
    expect(stored).toMatchObject({ mime: 'audio/wav' });
    expect(Buffer.from(stored.head).toString('latin1')).toBe('RIFF');
  });

  it('prints each event as a line as it is recorded; a call that cannot have a transcript fails with the rule', {
    timeout: TIMEOUT,
  }, async () => {
    const r = await cli(['phone', 'call', '--clinic', clinic, '--from', '052-000-1111', '--delay', '0']);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(
      /evt_\d+\s+call\.completed\s+call_\d+\s+recording\.available=false transcript\.status=null/,
    );
    expect(lines.at(-1)).toMatch(/^call_\d+: 1 event\(s\)\.$/);

    const refused = await cli([
      'phone',
      'call',
      '--clinic',
      clinic,
      '--from',
      '052-000-1111',
      '--recording',
      '--transcript',
      'completed',
      '--delay',
      '0',
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/call\.completed[\s\S]*call\.recording\.available/);
    expect(refused.stderr).toMatch(/error: Call call_\d+ was not answered: it gets no transcript\./);
  });

  it('a clinic with a webhook subscription: each event of the call has its delivery queued by the CLI process itself', {
    timeout: TIMEOUT,
  }, async () => {
    const clinicNo = Number(clinic.split('_')[1]);
    await query(
      dbUrl,
      `insert into webhook_subscription (clinic_id, url, event_types, secret, created_at, updated_at)
       values ($1, 'https://hooks.example.com/in', '{}', 'whsec_test', now(), now())`,
      [clinicNo],
    );
    const r = await cli([
      '--json',
      'phone',
      'call',
      '--clinic',
      clinic,
      '--from',
      '052-000-2222',
      '--delay',
      '0',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const { events } = JSON.parse(r.stdout);
    const jobs = await query(
      dbUrl,
      `select (data->>'event')::int as event, data->>'trigger' as trigger from pgboss.job where name = 'webhook-delivery' order by 1`,
    );
    expect(jobs).toEqual(
      events.map((e: any) => ({ event: Number(e.id.split('_')[1]), trigger: 'scheduled' })),
    );
  });
});
