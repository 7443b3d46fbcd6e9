import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createApiKey, revokeApiKey } from '../src/auth/keys.ts';
import { freePort } from './free-port.ts';
import { MEDIA_LINK_SECRET, NETWORK_SECRET, startTestApp, type TestApp } from './helpers.ts';
import { type ListenProcess, listen, node, type Receiver, root, startReceiver } from './listen-cli.ts';
import { until } from './ws-client.ts';

/**
 * `events listen` across a restart of the service it listens to: a real service process
 * (`src/main.ts`, as `npm start`) on a fixed port is stopped (SIGTERM: its sockets close with 1001)
 * and started again on the same port and database. Events written before, while it is away
 * (through this test's own app, a second instance on the same database) and after all reach the
 * loopback receiver, each exactly once. A revoked key then ends the command instead of a retry loop.
 */
let app: TestApp & { databaseUrl: string };
let clinicId: number;
let writer: string;
let reader: { id: string; key: string };
let receiver: Receiver;
let configHome: string;
let port: number;
let service: ChildProcess | undefined;
let listener: ListenProcess | undefined;

const serviceUrl = () => `http://127.0.0.1:${port}`;

async function startService(): Promise<void> {
  let out = '';
  const child = spawn(node, ['src/main.ts'], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: app.databaseUrl,
      // The test app serves the same database: one cluster, one set of secrets.
      NETWORK_SECRET,
      MEDIA_LINK_SECRET,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ROLES: 'http,sends,sweeps',
      SHUTDOWN_GRACE_MS: '500',
      RATE_LIMIT_POINTS: '0',
      AUTH_FAILURES_PER_MINUTE: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d) => (out += d));
  child.stderr?.on('data', (d) => (out += d));
  service = child;
  await until(() => child.exitCode !== null || /listening|http:\/\/127/.test(out), 30_000).catch(() => {});
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited:\n${out}`);
    const ok = await fetch(`${serviceUrl()}/health`)
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`the service never answered /health:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function stopService(): Promise<void> {
  const child = service as ChildProcess;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

async function createPatient(url: string, name: string): Promise<string> {
  const r = await fetch(`${url}/v1/patients`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${writer}` },
    body: JSON.stringify({ first_name: name, last_name: 'Restart' }),
  });
  expect(r.status).toBe(201);
  return (await r.json()).data.id;
}

beforeAll(async () => {
  app = await startTestApp();
  const c = await app.clinicWithKey('dental', ['patients:write'], 'listen restart');
  clinicId = c.clinicId;
  writer = c.key;
  reader = await createApiKey(app.orm.em.fork(), { clinicId, name: 'listen', scopes: ['webhooks:manage'] });
  receiver = await startReceiver();
  configHome = fs.mkdtempSync(path.join(os.tmpdir(), 'cg-listen-restart-'));
  port = await freePort();
  await startService();
}, 60_000);

afterAll(async () => {
  if (listener?.child.exitCode === null) listener.child.kill('SIGKILL');
  if (service && service.exitCode === null) service.kill('SIGKILL');
  await receiver.close();
  fs.rmSync(configHome, { recursive: true, force: true });
});

/** What the receiver got, by patient id (an event's data is its patient). */
const patientsReceived = () => new Set(receiver.received.map((r) => JSON.parse(r.body).data.id as string));

it('forwards every event once across a restart of the service: before, during the gap, after', {
  timeout: 120_000,
}, async () => {
  listener = listen(['--key', reader.key, '--forward-to', receiver.url, '--url', serviceUrl()], configHome);
  await listener.ready();
  // Connected is not yet subscribed: probes until one arrives (those before it are not this run's).
  const deadline = Date.now() + 20_000;
  while (receiver.received.length === 0) {
    if (Date.now() > deadline) throw new Error(`no probe arrived: ${listener.stdout()}`);
    await createPatient(serviceUrl(), 'Probe');
    await new Promise((r) => setTimeout(r, 200));
  }
  const firstEvent = Number(String(receiver.received[0].headers['x-service-event-id']).slice(4));

  const before: string[] = [];
  for (let i = 0; i < 3; i++) before.push(await createPatient(serviceUrl(), `Before${i}`));
  await until(() => before.every((id) => patientsReceived().has(id)), 10_000);
  // These may be forwarded live or replayed after the restart: once either way.
  for (let i = 0; i < 2; i++) before.push(await createPatient(serviceUrl(), `Last${i}`));

  await stopService();
  await until(() => /Connection lost \(1001/.test(listener?.stdout() ?? ''), 10_000);
  const gap: string[] = [];
  for (let i = 0; i < 3; i++) gap.push(await createPatient(app.url, `Gap${i}`));
  // Long enough for attempts to fail against the closed port (the backoff doubles).
  await new Promise((r) => setTimeout(r, 2000));
  expect(listener.child.exitCode).toBe(null);

  await startService();
  await until(() => /Reconnected: resuming after evt_\d+/.test(listener?.stdout() ?? ''), 30_000).catch(
    () => {
      throw new Error(`never reconnected; stdout: ${listener?.stdout()} stderr: ${listener?.stderr()}`);
    },
  );
  const after: string[] = [];
  for (let i = 0; i < 3; i++) after.push(await createPatient(serviceUrl(), `After${i}`));

  // Every patient.created of the clinic from the first one received on, read from the database.
  const db = new pg.Client({ connectionString: app.databaseUrl });
  await db.connect();
  const expected = await db
    .query<{ id: string }>(
      `select id from event where clinic_id = $1 and type = 'patient.created' and id >= $2 order by id`,
      [clinicId, firstEvent],
    )
    .finally(() => db.end());
  const ids = expected.rows.map((r) => `evt_${r.id}`);
  await until(() => ids.every((id) => receiver.counts.has(id)), 20_000).catch(() => {
    throw new Error(
      `missing ${ids.filter((id) => !receiver.counts.has(id))}; stdout: ${listener?.stdout()} stderr: ${listener?.stderr()}`,
    );
  });
  // Late duplicates would arrive now.
  await new Promise((r) => setTimeout(r, 500));
  for (const id of [...before, ...gap, ...after]) expect(patientsReceived().has(id)).toBe(true);
  expect([...receiver.counts.keys()].sort()).toEqual([...ids].sort());
  expect([...receiver.counts.values()].every((n) => n === 1)).toBe(true);
  // Forwarded in ascending id order, across the restart too.
  const order = receiver.received.map((r) => Number(String(r.headers['x-service-event-id']).slice(4)));
  expect(order).toEqual([...order].sort((a, b) => a - b));
  expect(listener.child.exitCode).toBe(null);
});

it('a key revoked while it listens ends it with exit code 1 and a clear message, no retry loop', {
  timeout: 30_000,
}, async () => {
  const p = listener as ListenProcess;
  expect(p.child.exitCode).toBe(null);
  await revokeApiKey(app.orm.em.fork(), reader.id);
  expect(await p.exited).toBe(1);
  expect(p.stderr()).toMatch(/error: the service refused the key \(401\): .*revoked/i);
});
