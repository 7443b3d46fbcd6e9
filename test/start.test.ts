import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

/**
 * `npm start` as users run it: the real entry point in a child process on Node 24 (the project's
 * `node`, as the start script resolves it), on an EMPTY database of this file's own (not the
 * migrated template: start must migrate and seed it itself), on a free port (PORT=0).
 */
const root = path.resolve(import.meta.dirname, '..');
const node = path.join(root, 'node_modules/.bin/node');
const READY_MS = 20_000;
const EXIT_MS = 5_000;

interface Started {
  child: ChildProcessWithoutNullStreams;
  url: string;
  stdout: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

let admin: pg.Client;
let dbName: string;
let dbUrl: string;
const children: ChildProcessWithoutNullStreams[] = [];

/** Starts src/main.ts and resolves once the welcome text has been printed in full. */
function start(env: Record<string, string> = {}): Promise<Started> {
  const child = spawn(node, ['src/main.ts'], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: dbUrl, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(`not ready within ${READY_MS} ms`), READY_MS);
    function fail(why: string) {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`npm start ${why}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`));
    }
    void exit.then(({ code, signal }) => fail(`exited early (code ${code}, signal ${signal})`));
    child.stdout.on('data', () => {
      // The welcome text ends with the GraphQL example (first start) or the CLI hint (later ones).
      const url = /listening on (http:\/\/\S+)/.exec(stdout)?.[1];
      if (url && /"query":"\{ patients|npm run cli -- key create/.test(stdout)) {
        clearTimeout(timer);
        resolve({ child, url, stdout: () => stdout, exit });
      }
    });
  });
}

/** SIGTERM; resolves with the exit and how long it took. */
async function terminate(s: Started): Promise<{ code: number | null; signal: string | null; ms: number }> {
  const t0 = Date.now();
  s.child.kill('SIGTERM');
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error(`no exit within ${EXIT_MS} ms of SIGTERM`)), EXIT_MS),
  );
  const res = await Promise.race([s.exit, timeout]);
  return { ...res, ms: Date.now() - t0 };
}

async function get(url: string, key?: string) {
  const res = await fetch(url, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body };
}

function count(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

beforeAll(async () => {
  admin = new pg.Client({ connectionString: inject('adminUrl') });
  await admin.connect();
  dbName = `cg_start_${randomBytes(5).toString('hex')}`;
  await admin.query(`create database "${dbName}"`);
  const url = new URL(inject('adminUrl'));
  url.pathname = `/${dbName}`;
  dbUrl = url.toString();
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await admin?.query(`drop database if exists "${dbName}" with (force)`);
  await admin?.end();
});

describe('npm start', () => {
  let readKey: string;

  it('migrates and seeds an empty database, prints the demo keys once, serves, and stops on SIGTERM', {
    timeout: READY_MS + EXIT_MS + 5_000,
  }, async () => {
    // Started with the environment a CLI line needs to find the same data (the demo's own folder).
    const dataDir = mkdtempSync(path.join(tmpdir(), 'cg-start-'));
    const s = await start({ DATA_DIR: dataDir });
    // The banner is one write, which a pipe may hand over in parts.
    for (let i = 0; i < 100 && !s.stdout().includes('events listen'); i++)
      await new Promise((r) => setTimeout(r, 50));
    const out = s.stdout();

    expect(out).toMatch(/"msg":"migrations applied"/);
    const db = new pg.Client({ connectionString: dbUrl });
    await db.connect();
    try {
      const { rows } = await db.query('select name from mikro_orm_migrations');
      expect(rows.length).toBeGreaterThan(0);
      expect((await db.query('select count(*)::int as n from clinic')).rows[0].n).toBeGreaterThan(0);
    } finally {
      await db.end();
    }

    expect(count(out, 'Demo data was seeded')).toBe(1);
    // The demo's clinics are test clinics (docs/test-mode.md): the banner says so, the keys show it.
    expect(out).toMatch(/Demo data was seeded: two test clinics \(cg_test_ keys, the sandbox network/);
    expect(out).toContain('docs/test-mode.md');
    expect(out).not.toContain('cg_live_');
    const read = /every read scope:\s+(cg_test_\S+)/.exec(out)?.[1];
    const chat = /chat:write:\s+(cg_test_\S+)/.exec(out)?.[1];
    expect(read, out).toBeTruthy();
    expect(chat, out).toBeTruthy();
    expect(chat).not.toBe(read);
    readKey = read!;
    expect(count(out, 'every read scope:')).toBe(1);
    expect(count(out, 'chat:write:')).toBe(1);
    // The curl and GraphQL examples, once, ready to paste.
    expect(count(out, `curl -s -H "Authorization: Bearer ${read}" "${s.url}/v1/patients?limit=3"`)).toBe(1);
    expect(count(out, `${s.url}/graphql \\`)).toBe(1);
    expect(count(out, `-d '{"query":"{ patients(first: 3)`)).toBe(1);
    // The printed GraphQL example runs as printed: the schema's names, not stale ones.
    const example = /-d '(\{"query":"\{ patients[^']*)'/.exec(out)?.[1];
    const answer = await fetch(`${s.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${read}`, 'content-type': 'application/json' },
      body: example,
    }).then((r) => r.json());
    expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
    expect(answer.data.patients.edges[0].node).toMatchObject({ firstName: expect.any(String) });

    expect((await get(`${s.url}/health`)).status).toBe(200);
    const patients = await get(`${s.url}/v1/patients`, read);
    expect(patients.status, JSON.stringify(patients.body)).toBe(200);
    expect(patients.body.data.length).toBeGreaterThan(0);
    expect((await get(`${s.url}/v1/patients`)).status).toBe(401);

    // The printed send works end to end: the sandbox's receipts reach this server's callback.
    expect(count(out, '/v1/chat/messages \\')).toBe(1);
    const sent = await fetch(`${s.url}/v1/chat/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${chat}`, 'content-type': 'application/json' },
      body: JSON.stringify({ to: '050-000-0993', text: 'Hello from the API' }),
    });
    expect(sent.status).toBe(202);
    const id = (await sent.json()).data.id;
    let status = 'queued';
    for (let i = 0; i < 50 && status !== 'delivered'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = (await get(`${s.url}/v1/chat/messages/${id}`, read)).body.data.status;
    }
    expect(status).toBe('delivered');

    // Every CLI line carries the environment the service was started with.
    const cliLines = out.split('\n').filter((l) => l.includes('npm run cli --'));
    expect(cliLines.length).toBeGreaterThan(2);
    for (const l of cliLines) expect(l).toContain(`DATA_DIR=${dataDir} npm run cli --`);
    // The availability example asks for a day with free slots, for the booking example after it.
    const availability = /Bearer (cg_test_\S+)" "(\S+\/v1\/availability\?[^"]+)"/.exec(out);
    expect(availability, out).toBeTruthy();
    const slots = await get(availability![2], availability![1]);
    expect(slots.status, JSON.stringify(slots.body)).toBe(200);
    expect(slots.body.data.length, availability![2]).toBeGreaterThan(0);

    // The keys hold what the README lists: webhooks:manage goes with the clinic writes, not the reads.
    const writer = /clinic writes:\s+(cg_test_\S+)/.exec(out)?.[1] as string;
    expect((await get(`${s.url}/v1/webhooks`, read)).status).toBe(403);
    expect((await get(`${s.url}/v1/webhooks`, writer)).status).toBe(200);
    // A receiver subscribed and sent a test event, with the two calls as printed.
    const post = (url: string, body: string) =>
      fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${writer}`, 'content-type': 'application/json' },
        body,
      }).then(async (r) => ({ status: r.status, body: await r.json() }));
    const subscribe = /(\S+\/v1\/webhooks) \\\n\s+-d '([^']+)'/.exec(out);
    expect(subscribe, out).toBeTruthy();
    const sub = await post(subscribe![1], subscribe![2]);
    expect(sub.status, JSON.stringify(sub.body)).toBe(201);
    const test = /(\S+\/v1\/webhooks\/(wh_\d+)\/test) -d '([^']+)'/.exec(out);
    expect(test, out).toBeTruthy();
    expect(test![2]).toBe(sub.body.data.id);
    const sample = await post(test![1], test![3]);
    expect(sample.status, JSON.stringify(sample.body)).toBe(202);
    expect(sample.body.data).toMatchObject({ type: 'appointment.created', test: true });

    const stopped = await terminate(s);
    expect(stopped).toMatchObject({ code: 0, signal: null });
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('on a second start keeps the data and prints no keys', {
    timeout: READY_MS + EXIT_MS + 5_000,
  }, async () => {
    expect(readKey, 'needs the first start').toBeTruthy();
    const s = await start();
    const out = s.stdout();
    expect(out).not.toMatch(/migrations applied/);
    expect(out).not.toMatch(/Demo data was seeded|cg_test_|cg_live_/);
    expect(out).toMatch(/Existing data kept/);
    expect(out).toMatch(/the demo keys printed on the first start still work/);

    expect((await get(`${s.url}/health`)).status).toBe(200);
    const patients = await get(`${s.url}/v1/patients`, readKey);
    expect(patients.status).toBe(200);
    expect(patients.body.data.length).toBeGreaterThan(0);

    const stopped = await terminate(s);
    expect(stopped).toMatchObject({ code: 0, signal: null });
  });

  it('passes the queue tuning on, as `npm run worker` does: the delivery heartbeat it sets is the configured one', {
    timeout: READY_MS + EXIT_MS + 5_000,
  }, async () => {
    const heartbeat = async () => {
      const db = new pg.Client({ connectionString: dbUrl });
      await db.connect();
      try {
        const { rows } = await db.query(
          `select heartbeat_seconds from pgboss.queue where name = 'webhook-delivery'`,
        );
        return Number(rows[0].heartbeat_seconds);
      } finally {
        await db.end();
      }
    };
    const s = await start({ DELIVERY_HEARTBEAT_SECONDS: '17', QUEUE_SUPERVISE_SECONDS: '5' });
    expect(await heartbeat()).toBe(17);
    expect(await terminate(s)).toMatchObject({ code: 0, signal: null });
  });
});
