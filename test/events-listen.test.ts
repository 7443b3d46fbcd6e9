import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenSecret } from '../src/cli/events-listen.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { type ListenProcess, listen, type Receiver, startReceiver, verify } from './listen-cli.ts';
import { until } from './ws-client.ts';

/**
 * `npm run cli -- events listen` as a real child process against a started server: each event is
 * POSTed to a loopback receiver, signed as a webhook delivery with the secret the command
 * printed. The receiver verifies as the spec's "Verification" says: HMAC-SHA256 of the raw body.
 * The secret is the same on every run for a key on one machine (the config folder is the child's
 * XDG_CONFIG_HOME, a folder of this test's own); --secret replaces it.
 */
let app: TestApp;
let clinicId: number;
let writer: string;
let reader: string;
let receiver: Receiver;
let configHome: string;
const running: ListenProcess[] = [];

beforeAll(async () => {
  app = await startTestApp();
  const c = await app.clinicWithKey('dental', ['patients:write'], 'listen');
  clinicId = c.clinicId;
  writer = c.key;
  reader = await app.key(c.clinicId, ['webhooks:manage']);
  receiver = await startReceiver((n) => (n === 2 ? 500 : 200));
  configHome = fs.mkdtempSync(path.join(os.tmpdir(), 'cg-listen-'));
});

afterAll(async () => {
  for (const p of running) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  await receiver.close();
  fs.rmSync(configHome, { recursive: true, force: true });
});

const start = (args: string[]) => {
  const p = listen(args, configHome);
  running.push(p);
  return p;
};

describe('events listen', () => {
  it('forwards each event signed as a delivery and prints one line per event with the status', async () => {
    const p = start([
      '--key',
      reader,
      '--forward-to',
      receiver.url,
      '--url',
      app.url,
      '--types',
      'patient.created',
    ]);
    const secret = await p.ready();
    expect(secret).toMatch(/^whsec_/);
    // Connected is not yet subscribed: the events must come after the subscription started.
    await until(() => app.server.app.eventHub.size === 1);
    const a = await app.post('/v1/patients', { first_name: 'Lis', last_name: 'Ten' }, writer);
    // Not one of --types: events go in order, so a broken filter forwards it before b's.
    const u = await app.send('PATCH', `/v1/patients/${a.body.data.id}`, { first_name: 'Liz' }, writer);
    const b = await app.post('/v1/patients', { first_name: 'Lis', last_name: 'Tenor' }, writer);
    expect([a.status, u.status, b.status]).toEqual([201, 200, 201]);
    const lines = () =>
      p
        .stdout()
        .split('\n')
        .filter((l) => l.includes(' -> '));
    await until(() => receiver.received.length >= 2 && lines().length >= 2, 10_000);
    const events = (await app.get('/v1/events?type=patient.created&limit=2', reader)).body.data.reverse();
    for (const [i, r] of receiver.received.entries()) {
      expect(verify(secret, r.body, r.headers['x-service-signature'] as string)).toBe(true);
      expect(verify('whsec_other', r.body, r.headers['x-service-signature'] as string)).toBe(false);
      // The exact envelope GET /v1/events/{id} answers, and the headers of a delivery.
      expect(JSON.parse(r.body)).toEqual(events[i]);
      expect(r.headers['x-service-event-id']).toBe(events[i].id);
      expect(r.headers['x-service-event-type']).toBe('patient.created');
      expect(Number(r.headers['x-service-timestamp'])).toBeGreaterThan(1_700_000_000);
    }
    expect(lines()[0]).toMatch(new RegExp(`patient.created ${events[0].id} +-> 200 POST ${receiver.url}`));
    expect(lines()[1]).toMatch(/-> 500 POST/);
    expect(await p.stop()).toBe(130);
  }, 30_000);

  it('signs with the same secret on every run for a key on this machine; another key or machine, another', async () => {
    const once = async () => {
      const p = start(['--key', reader, '--forward-to', receiver.url, '--url', app.url]);
      const secret = await p.ready();
      expect(await p.stop()).toBe(130);
      return secret;
    };
    const first = await once();
    expect(await once()).toBe(first);
    expect(first).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    // What is kept is a seed, not the key; another key, or another machine's seed, another secret.
    const seed = path.join(configHome, 'clinic-gateway/events-listen.seed');
    expect(fs.readFileSync(seed, 'utf8')).not.toContain(reader);
    expect(fs.statSync(seed).mode & 0o777).toBe(0o600);
    expect(listenSecret(reader, seed)).toBe(first);
    expect(listenSecret(await app.key(clinicId, ['webhooks:manage']), seed)).not.toBe(first);
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'cg-listen-other-'));
    try {
      expect(listenSecret(reader, path.join(elsewhere, 'events-listen.seed'))).not.toBe(first);
    } finally {
      fs.rmSync(elsewhere, { recursive: true, force: true });
    }
  }, 30_000);

  it('--secret replaces the kept secret: printed, and what the deliveries are signed with', async () => {
    const mine = 'whsec_my_receivers_own_secret';
    const p = start(['--key', reader, '--forward-to', receiver.url, '--url', app.url, '--secret', mine]);
    expect(await p.ready()).toBe(mine);
    expect(p.stdout()).toContain('from --secret');
    await until(() => app.server.app.eventHub.size === 1);
    const before = receiver.received.length;
    const a = await app.post('/v1/patients', { first_name: 'Sec', last_name: 'Ret' }, writer);
    await until(() => receiver.received.length > before, 10_000);
    const r = receiver.received[before];
    expect(r.headers['x-service-event-id']).toBe(
      (await app.get(`/v1/events?type=patient.created&limit=1`, reader)).body.data[0].id,
    );
    expect(JSON.parse(r.body).data.id).toBe(a.body.data.id);
    expect(verify(mine, r.body, r.headers['x-service-signature'] as string)).toBe(true);
    expect(await p.stop()).toBe(130);
  }, 30_000);

  it('a key the service refuses ends it with exit code 1 and says so', async () => {
    const p = start(['--key', 'cg_test_not_a_key', '--forward-to', receiver.url, '--url', app.url]);
    expect(await p.exited).toBe(1);
    expect(p.stderr()).toMatch(/error: the service refused the key/);
  }, 30_000);
});
