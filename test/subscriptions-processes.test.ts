import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MEDIA_LINK_SECRET, NETWORK_SECRET, startTestApp, type TestApp } from './helpers.ts';
import { startServiceProcess } from './service-process.ts';
import { connect, type TestSocket } from './ws-client.ts';

/**
 * Two service PROCESSES on one database: this test's app, and a real server child process
 * (test/service-child.ts). `events` subscribers of each get every event committed through
 * either exactly once: nothing rides on memory the two share (they share none).
 */
let app: TestApp & { databaseUrl: string };
let child: ChildProcess;
let childUrl: string;
let writer: string;
let reader: string;
const sockets: TestSocket[] = [];

beforeAll(async () => {
  app = await startTestApp();
  const c = await app.clinicWithKey('dental', ['patients:write'], 'two processes');
  writer = c.key;
  reader = await app.key(c.clinicId, ['webhooks:manage']);
  ({ url: childUrl, child } = await startServiceProcess(
    { DATABASE_URL: app.databaseUrl, NETWORK_SECRET, MEDIA_LINK_SECRET },
    [],
    'test/service-child.ts',
  ));
}, 60_000);

afterAll(async () => {
  await Promise.all(sockets.map((s) => s.dispose()));
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.on('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
});

it('every event committed through either process reaches every subscriber of both, exactly once', {
  timeout: 60_000,
}, async () => {
  const query = 'subscription { events(types: [PATIENT_CREATED]) { id data } }';
  const subs = [app.url, app.url, childUrl, childUrl].map((url) => {
    const s = connect(url, { Authorization: `Bearer ${reader}` });
    sockets.push(s);
    return s.subscribe(query);
  });
  // Subscribed everywhere once a probe event has reached all four (graphql-ws acks no subscribe).
  const probe = async () => {
    const r = await fetch(`${app.url}/v1/patients`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${writer}` },
      body: JSON.stringify({ first_name: 'Probe', last_name: 'Processes' }),
    });
    return (await r.json()).data.id as string;
  };
  // Probes until all four have one (a subscription registers some time after its socket opens).
  const deadline = Date.now() + 20_000;
  while (!subs.every((sub) => sub.results.length > 0)) {
    if (Date.now() > deadline) throw new Error('the subscriptions never received a probe');
    await probe();
    await new Promise((r) => setTimeout(r, 100));
  }
  await new Promise((r) => setTimeout(r, 300));
  const before = subs.map((sub) => sub.results.length);
  const created: string[] = [];
  await Promise.all(
    Array.from({ length: 10 }, async (_, i) => {
      const r = await fetch(`${i % 2 ? childUrl : app.url}/v1/patients`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${writer}` },
        body: JSON.stringify({ first_name: `P${i}`, last_name: 'Processes' }),
      });
      expect(r.status).toBe(201);
      created.push((await r.json()).data.id);
    }),
  );
  await Promise.all(subs.map((sub, i) => sub.waitFor(before[i] + 10)));
  // Late duplicates would arrive now.
  await new Promise((r) => setTimeout(r, 300));
  subs.forEach((sub, i) => {
    expect(sub.errors).toEqual([]);
    expect(sub.results).toHaveLength(before[i] + 10);
    expect(new Set(sub.results.slice(before[i]).map((r) => r.events.data.id))).toEqual(new Set(created));
  });
});
