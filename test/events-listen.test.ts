import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { until } from './ws-client.ts';

/**
 * `npm run cli -- events listen` as a real child process against a started server: each event is
 * POSTed to a loopback receiver, signed as a webhook delivery with the secret the command
 * printed. The receiver verifies as the spec's "Verification" says: HMAC-SHA256 of the raw body.
 */
const root = path.resolve(import.meta.dirname, '..');
const node = path.join(root, 'node_modules/.bin/node');

let app: TestApp;
let writer: string;
let reader: string;
let receiver: http.Server;
let receiverUrl: string;
let child: ChildProcess | undefined;
const received: { body: string; headers: http.IncomingHttpHeaders }[] = [];
let stdout = '';

beforeAll(async () => {
  app = await startTestApp();
  const c = await app.clinicWithKey('dental', ['patients:write'], 'listen');
  writer = c.key;
  reader = await app.key(c.clinicId, ['webhooks:manage']);
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      received.push({ body: Buffer.concat(chunks).toString('utf8'), headers: req.headers });
      res.writeHead(received.length === 2 ? 500 : 200).end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
});

afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGKILL');
  }
  await new Promise((r) => receiver.close(r));
});

const verify = (secret: string, raw: string, header: string | undefined) => {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`);
  const got = Buffer.from(header ?? '');
  return got.length === expected.length && timingSafeEqual(got, expected);
};

describe('events listen', () => {
  it('forwards each event signed as a delivery and prints one line per event with the status', async () => {
    child = spawn(
      node,
      [
        'src/cli.ts',
        'events',
        'listen',
        '--key',
        reader,
        '--forward-to',
        receiverUrl,
        '--url',
        app.url,
        '--types',
        'patient.created',
      ],
      { cwd: root, env: { ...process.env, LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stdout?.on('data', (d) => {
      stdout += d;
    });
    child.stderr?.on('data', (d) => {
      stderr += d;
    });
    await until(() => /Signing secret: whsec_/.test(stdout), 15_000).catch(() => {
      throw new Error(`no ready line; stdout: ${stdout} stderr: ${stderr}`);
    });
    const secret = /Signing secret: (whsec_\S+)/.exec(stdout)?.[1] as string;
    // Connected is not yet subscribed: the events must come after the subscription started.
    await until(() => app.server.app.eventHub.size === 1);
    const a = await app.post('/v1/patients', { first_name: 'Lis', last_name: 'Ten' }, writer);
    // Not one of --types: events go in order, so a broken filter forwards it before b's.
    const u = await app.send('PATCH', `/v1/patients/${a.body.data.id}`, { first_name: 'Liz' }, writer);
    const b = await app.post('/v1/patients', { first_name: 'Lis', last_name: 'Tenor' }, writer);
    expect([a.status, u.status, b.status]).toEqual([201, 200, 201]);
    await until(
      () => received.length >= 2 && stdout.split('\n').filter((l) => l.includes(' -> ')).length >= 2,
      10_000,
    );
    const events = (await app.get('/v1/events?type=patient.created&limit=2', reader)).body.data.reverse();
    for (const [i, r] of received.entries()) {
      expect(verify(secret, r.body, r.headers['x-service-signature'] as string)).toBe(true);
      expect(verify('whsec_other', r.body, r.headers['x-service-signature'] as string)).toBe(false);
      // The exact envelope GET /v1/events/{id} answers, and the headers of a delivery.
      expect(JSON.parse(r.body)).toEqual(events[i]);
      expect(r.headers['x-service-event-id']).toBe(events[i].id);
      expect(r.headers['x-service-event-type']).toBe('patient.created');
      expect(Number(r.headers['x-service-timestamp'])).toBeGreaterThan(1_700_000_000);
    }
    const lines = stdout.split('\n').filter((l) => l.includes(' -> '));
    expect(lines[0]).toMatch(new RegExp(`patient.created ${events[0].id} +-> 200 POST ${receiverUrl}`));
    expect(lines[1]).toMatch(/-> 500 POST/);
    child.kill('SIGTERM');
    const code = await new Promise((r) => child?.once('exit', r));
    expect(code).toBe(130);
  }, 30_000);
});
