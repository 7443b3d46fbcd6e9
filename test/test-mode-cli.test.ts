import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { runCli } from './run-cli.ts';
import { type Receiver, startReceiver } from './webhook-receiver.ts';

/**
 * Test mode in the CLI (issue 29, docs/test-mode.md), as users run it: a child process on Node 24.
 * It shares its database with a running app (startTestApp's), so a key the CLI creates is a key
 * the app knows, and `events trigger` goes through the app's POST /v1/events.
 */
const TIMEOUT = 60_000;
const TEST_ONLY = /is for test clinics only, and this clinic is live \(its keys start cg_live_\).*cg_test_/;

let app: TestApp & { databaseUrl: string };
let receiver: Receiver;

beforeAll(async () => {
  app = await startTestApp();
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

const cli = (...args: string[]) => runCli(args, { DATABASE_URL: app.databaseUrl, PHONE_CALL_DELAY_MS: '0' });

async function cliJson(...args: string[]): Promise<any> {
  const res = await cli('--json', ...args);
  expect(res.code, res.stderr).toBe(0);
  return JSON.parse(res.stdout);
}

async function count(sql: string, params: unknown[] = []): Promise<number> {
  const c = new pg.Client({ connectionString: app.databaseUrl });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows[0].n;
  } finally {
    await c.end();
  }
}

const numberOf = (id: string) => Number(id.split('_')[1]);
const create = (name: string, phone: string, ...mode: string[]) =>
  cli(
    '--json',
    'clinic',
    'create',
    '--name',
    name,
    '--kind',
    'dental',
    '--country',
    'IL',
    '--phone',
    phone,
    ...mode,
  );

let live: { id: string; key: string };
let test: { id: string; key: string };

describe('cli: clinics of each mode', () => {
  it('clinic create without --mode (or with another) fails with a clear message and creates nothing', {
    timeout: TIMEOUT,
  }, async () => {
    const before = await count('select count(*)::int as n from clinic');
    const none = await create('No mode', '03-555-0190');
    expect(none.code).not.toBe(0);
    expect(none.stderr).toMatch(/required option '--mode <mode>' not specified/);
    expect(none.stdout).toBe('');
    const other = await create('Other mode', '03-555-0191', '--mode', 'staging');
    expect(other.code).not.toBe(0);
    expect(other.stderr).toMatch(/Allowed choices are test, live/);
    expect(await count('select count(*)::int as n from clinic')).toBe(before);
  });

  it('--mode live: its keys are cg_live_; --mode test: cg_test_', { timeout: TIMEOUT }, async () => {
    const l = await create('Live clinic', '03-555-0192', '--mode', 'live');
    expect(l.code, l.stderr).toBe(0);
    const lc = JSON.parse(l.stdout);
    expect(lc.mode).toBe('live');
    const t = await create('Test clinic', '03-555-0193', '--mode', 'test');
    expect(t.code, t.stderr).toBe(0);
    const tc = JSON.parse(t.stdout);
    expect(tc.mode).toBe('test');
    const scopes = ['--scopes', 'webhooks:manage,patients:write', '--name', 'Hooks'];
    const lk = await cliJson('key', 'create', '--clinic', lc.id, ...scopes);
    const tk = await cliJson('key', 'create', '--clinic', tc.id, ...scopes);
    expect(lk.key).toMatch(/^cg_live_[A-Za-z0-9_-]{43}$/);
    expect(tk.key).toMatch(/^cg_test_[A-Za-z0-9_-]{43}$/);
    // The listing's prefix says it too.
    const listed = await cliJson('key', 'list', '--clinic', lc.id);
    expect(listed.data.map((k: any) => k.prefix)).toEqual([lk.key.slice(0, 'cg_live_'.length + 6)]);
    live = { id: lc.id, key: lk.key };
    test = { id: tc.id, key: tk.key };
    // The app knows the keys the CLI made (one database).
    expect((await app.get('/v1/webhooks', live.key)).status).toBe(200);
  });
});

describe("cli: the sandbox's tools refuse a live clinic", () => {
  it('network inbound, react and sync-templates exit non-zero naming test clinics, and write nothing', {
    timeout: TIMEOUT,
  }, async () => {
    const cases = [
      ['network', 'inbound', '--clinic', live.id, '--from', '050-700-0001', '--text', 'Hi'],
      ['network', 'react', '--clinic', live.id, '--message', 'out_1', '--emoji', '👍'],
      ['network', 'sync-templates', '--clinic', live.id],
    ];
    for (const args of cases) {
      const res = await cli(...args);
      expect(res.code, args.join(' ')).not.toBe(0);
      expect(res.stderr, args.join(' ')).toMatch(TEST_ONLY);
      expect(res.stderr).toContain(`${args[0]} ${args[1]} is for test clinics only`);
      expect(res.stdout).toBe('');
    }
    const clinic = numberOf(live.id);
    expect(await count('select count(*)::int as n from message where clinic_id = $1', [clinic])).toBe(0);
    expect(await count('select count(*)::int as n from conversation where clinic_id = $1', [clinic])).toBe(0);
    expect(await count('select count(*)::int as n from template where clinic_id = $1', [clinic])).toBe(0);
    // The same command for the test clinic records the patient's message.
    const ok = await cliJson(
      'network',
      'inbound',
      '--clinic',
      test.id,
      '--from',
      '050-700-0001',
      '--text',
      'Hi',
    );
    expect(ok).toMatchObject({ status: 'recorded', id: expect.stringMatching(/^in_\d+$/) });
  });

  it('phone call exits non-zero naming test clinics, and records no call', { timeout: TIMEOUT }, async () => {
    const res = await cli('phone', 'call', '--clinic', live.id, '--from', '050-123-4567', '--answered');
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(TEST_ONLY);
    expect(res.stderr).toContain('phone call is for test clinics only');
    expect(res.stdout).toBe('');
    expect(await count('select count(*)::int as n from call where clinic_id = $1', [numberOf(live.id)])).toBe(
      0,
    );
    expect(
      await count('select count(*)::int as n from event where clinic_id = $1', [numberOf(live.id)]),
    ).toBe(0);
  });

  it("events trigger with a live clinic's key fails with the service's 403 message; a test clinic's is delivered", {
    timeout: TIMEOUT,
  }, async () => {
    // The live clinic has a subscription receiving the type: its mode is the only reason to refuse.
    const sub = await app.post('/v1/webhooks', { url: 'https://93.184.215.14/hooks' }, live.key);
    expect(sub.status, JSON.stringify(sub.body)).toBe(201);
    const res = await cli('events', 'trigger', 'patient.created', '--key', live.key, '--url', app.url);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('POST /v1/events is for test clinics only');
    expect(res.stderr).toMatch(TEST_ONLY);
    expect(res.stdout).toBe('');
    expect(
      await count('select count(*)::int as n from event where clinic_id = $1', [numberOf(live.id)]),
    ).toBe(0);

    const hook = await app.post(
      '/v1/webhooks',
      { url: receiver.url, event_types: ['patient.created'] },
      test.key,
    );
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    receiver.secret = hook.body.data.secret;
    const ok = await cli('events', 'trigger', 'patient.created', '--key', test.key, '--url', app.url);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^Sent patient\.created sample evt_\d+/);
    await receiver.waitFor(1);
    expect(receiver.accepted[0]).toMatchObject({ type: 'patient.created' });
    expect(receiver.accepted[0].body.test).toBe(true);
  });
});
