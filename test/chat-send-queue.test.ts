import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Clinic } from '../src/entities/index.ts';
import { signBody } from '../src/lib/signing.ts';
import { type MessagingNetwork, NetworkRefusal, type OutboundMessage } from '../src/network/adapter.ts';
import { SEND_FAILED_QUEUE, SEND_QUEUE, sendQueue } from '../src/services/chat/send-jobs.ts';
import { chatSendWorkers } from '../src/services/chat/send-worker.ts';
import { syncTemplates } from '../src/services/chat/template-sync.ts';
import { MEDIA_LINK_SECRET, NETWORK_SECRET, startTestApp, type TestApp } from './helpers.ts';
import { startServiceProcess } from './service-process.ts';

/**
 * Outbound messages through the job queue (issue 17): the request records the message and its
 * job in one transaction and returns; a worker hands it to the network. The server here runs
 * no workers, so each test starts the worker it needs (with the network it needs) and a send's
 * job waits for it, as it would for a process that was killed.
 */
const root = path.resolve(import.meta.dirname, '..');
const node = path.join(root, 'node_modules/.bin/node');

let app: TestApp & { databaseUrl: string };
let read: string;
let write: string;
let clinicId: number;
let clinicPhone: string;
let n = 0;
let sql: pg.Client;
const children: ChildProcess[] = [];
/** The workers a test started, stopped after it. */
let working: string[] = [];

beforeAll(async () => {
  app = await startTestApp({ workers: false });
  const c = await app.clinicWithKey('dental', ['chat:read']);
  clinicId = c.clinicId;
  read = c.key;
  write = await app.key(clinicId, ['chat:write']);
  clinicPhone = (await app.orm.em.fork().findOneOrFail(Clinic, clinicId)).phone as string;
  await syncTemplates(app.orm.em.fork(), clinicId, app.server.network);
  sql = new pg.Client({ connectionString: app.databaseUrl });
  await sql.connect();
});

beforeEach(async () => {
  app.clock.set('2026-11-01T10:00:00Z');
  // Retries a moment apart instead of seconds (the attempts and the dead letter are as shipped);
  // again before each test, as a process that starts sets the queue's options back.
  await app.server.jobs.queue.boss.updateQueue(SEND_QUEUE, { retryDelay: 0, retryBackoff: false });
});

afterEach(async () => {
  for (const w of working) await app.server.jobs.queue.boss.offWork(SEND_QUEUE, { id: w, wait: true });
  working = [];
  await app.server.jobs.queue.boss.offWork(SEND_FAILED_QUEUE, { wait: true });
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await sql?.end();
});

const newPhone = () => `+97250${String(2000000 + ++n * 7)}`;
const getMessage = async (id: string) => (await app.get(`/v1/chat/messages/${id}`, read)).body.data;
const send = async (to: string, text: string) => {
  const r = await app.post('/v1/chat/messages', { to, text }, write);
  expect(r.status).toBe(202);
  expect(r.body.data.status).toBe('queued');
  return r.body.data.id as string;
};

/** Starts this process's send workers over `network` (the sandbox unless a test wraps it). */
async function startWorkers(network: MessagingNetwork = app.server.network, networkTimeoutMs?: number) {
  const boss = app.server.jobs.queue.boss;
  for (const w of chatSendWorkers({
    em: app.orm.em,
    networks: { test: network, live: null },
    clock: app.clock,
    ...(networkTimeoutMs ? { networkTimeoutMs } : {}),
  })) {
    const id = await boss.work(w.queue, w.options, w.handler);
    if (w.queue === SEND_QUEUE) working.push(id);
  }
}

/** The send jobs of a message, by state. */
async function jobsOf(id: string): Promise<string[]> {
  const { rows } = await sql.query<{ name: string; state: string }>(
    `select name, state from pgboss.job where name in ($1, $2) and data->>'message' = $3 order by created_on`,
    [SEND_QUEUE, SEND_FAILED_QUEUE, id.replace('out_', '')],
  );
  return rows.map((r) => `${r.name}:${r.state}`);
}

/** A network that throws `errors` (in turn) before it lets sends through to the sandbox. */
function failingNetwork(errors: Error[]): MessagingNetwork & { attempts: OutboundMessage[] } {
  const attempts: OutboundMessage[] = [];
  const sandbox = app.server.network;
  return {
    attempts,
    async send(m) {
      attempts.push(m);
      const e = errors.shift();
      if (e) throw e;
      return sandbox.send(m);
    },
    react: (r) => sandbox.react(r),
    templates: (p) => sandbox.templates(p),
  };
}

describe('a send outlives the process that recorded it', () => {
  it('killed with SIGKILL after the 202, its message is sent by another worker and its receipts applied', {
    timeout: 60_000,
  }, async () => {
    const { url, child } = await startServiceProcess(
      { DATABASE_URL: app.databaseUrl, NETWORK_SECRET, MEDIA_LINK_SECRET },
      children,
      'test/service-child.ts',
    );
    const to = newPhone();
    const r = await fetch(`${url}/v1/chat/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${write}` },
      body: JSON.stringify({ to, text: 'Your appointment is confirmed' }),
    });
    const sent = (await r.json()) as { data: { id: string; status: string } };
    expect(r.status).toBe(202);
    expect(sent.data.status).toBe('queued');
    const exited = new Promise((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    // The process is gone; the message and its job are not.
    const id = sent.data.id;
    expect((await getMessage(id)).status).toBe('queued');
    expect(await jobsOf(id)).toEqual(['chat-send:created']);
    expect(app.server.network.sent.filter((s) => s.to === to)).toEqual([]);

    await startWorkers();
    await app.settle();
    const m = await getMessage(id);
    // Receipts found the message by the network id the worker saved: sent, delivered, read.
    expect(m.status).toBe('read');
    expect(m.timestamps.sent_at && m.timestamps.delivered_at && m.timestamps.read_at).toBeTruthy();
    expect(app.server.network.sent.filter((s) => s.to === to)).toMatchObject([
      { kind: 'template', to, params: ['Your appointment is confirmed'], reference: id },
    ]);
    expect(await jobsOf(id)).toEqual(['chat-send:completed']);
  });
});

describe('npm run worker', () => {
  it('sends what the service recorded, its sandbox calling the service back with the receipts', {
    timeout: 60_000,
  }, async () => {
    const worker = spawn(node, ['src/worker.ts'], {
      cwd: root,
      env: {
        ...process.env,
        DATABASE_URL: app.databaseUrl,
        PUBLIC_URL: app.url,
        NETWORK_SECRET,
        MEDIA_LINK_SECRET,
        SANDBOX_RECEIPT_DELAYS_MS: '10,20,30',
        LOG_LEVEL: 'info',
      },
    });
    children.push(worker);
    // The worker's sandbox dates its receipts by the real clock; the service must agree.
    app.clock.set(new Date().toISOString());
    let out = '';
    worker.stdout.on('data', (d) => (out += d));
    worker.stderr.on('data', (d) => (out += d));
    await waitFor(() => out.includes('"msg":"started"'), `worker not started:\n${out}`);
    const id = await send(newPhone(), 'From the worker process');
    await app.settle();
    await waitFor(async () => (await getMessage(id)).status === 'read', `not read:\n${out}`);
    // This process's sandbox never saw it: the worker's network sent it.
    expect(app.server.network.sent.some((s) => s.reference === id)).toBe(false);
    const exited = new Promise((resolve) => worker.on('exit', (code) => resolve(code)));
    worker.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});

async function waitFor(ok: () => boolean | Promise<boolean>, why: string, ms = 20_000) {
  const until = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > until) throw new Error(why);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('failures', () => {
  it('transient network errors are tried again until the network takes the message', async () => {
    const network = failingNetwork([new Error('connect ECONNREFUSED'), new Error('network answered 503')]);
    await startWorkers(network);
    const to = newPhone();
    const id = await send(to, 'Retried');
    await app.settle();
    expect(network.attempts.length).toBe(3);
    expect(new Set(network.attempts.map((a) => a.reference))).toEqual(new Set([id]));
    expect((await getMessage(id)).status).toBe('read');
    expect(await jobsOf(id)).toEqual(['chat-send:completed']);
  });

  it('a refusal fails the message at once, with the reason and chat.message.failed (failure_reason null)', async () => {
    const network = failingNetwork([new NetworkRefusal('the template is paused')]);
    await startWorkers(network);
    const id = await send(newPhone(), 'Refused');
    await app.settle();
    expect(network.attempts.length).toBe(1);
    const m = await getMessage(id);
    expect(m).toMatchObject({
      status: 'failed',
      failure_reason: 'The messaging network refused the message: the template is paused',
      timestamps: { sent_at: null, failed_at: '2026-11-01T10:00:00.000Z' },
    });
    const { rows } = await sql.query<{ type: string; data: any }>(
      `select type, data from event where type like 'chat.message.%' and data->>'id' = $1`,
      [id],
    );
    expect(rows).toEqual([{ type: 'chat.message.failed', data: { ...m, failure_reason: null } }]);
  });

  it('errors past the last retry fail the message with the last error, through the dead letter', {
    timeout: 40_000,
  }, async () => {
    const network = failingNetwork(
      Array.from(
        { length: sendQueue.options.retryLimit as number },
        (_, i) => new Error(`timeout ${i}`),
      ).concat(new Error('still unreachable')),
    );
    await startWorkers(network);
    const id = await send(newPhone(), 'Never taken');
    await app.settle();
    expect(network.attempts.length).toBe((sendQueue.options.retryLimit as number) + 1);
    expect(await getMessage(id)).toMatchObject({
      status: 'failed',
      failure_reason: `The messaging network could not take the message in ${network.attempts.length} attempt(s): still unreachable`,
    });
    expect(await jobsOf(id)).toEqual(['chat-send:failed', 'chat-send-failed:completed']);
  });
});

describe('never twice', () => {
  it('a job run again after the network took the message sends nothing more', async () => {
    const network = failingNetwork([]);
    await startWorkers(network);
    const to = newPhone();
    const id = await send(to, 'Once');
    await app.settle();
    // As if the worker died after saving the network id, before completing its job.
    await app.server.jobs.queue.boss.send(SEND_QUEUE, { message: Number(id.slice(4)), clinic: clinicId });
    await app.settle();
    expect(network.attempts).toHaveLength(1);
    expect(app.server.network.sent.filter((s) => s.to === to)).toHaveLength(1);
  });

  it('an attempt whose answer was lost is taken by the network as the first (same reference), not sent twice', async () => {
    const sandbox = app.server.network;
    let lost = true;
    const network = failingNetwork([]);
    network.send = async (m) => {
      network.attempts.push(m);
      const accepted = await sandbox.send(m);
      if (lost) {
        lost = false;
        throw new Error('socket hang up'); // accepted, but the answer never arrived
      }
      return accepted;
    };
    await startWorkers(network);
    const to = newPhone();
    const id = await send(to, 'Lost answer');
    await app.settle();
    expect(network.attempts.length).toBe(2);
    expect(sandbox.sent.filter((s) => s.to === to)).toHaveLength(1);
    expect((await getMessage(id)).status).toBe('read');
  });

  it('an attempt whose network never answers ends at its timeout, and the next one sends the message once', async () => {
    const sandbox = app.server.network;
    const network = failingNetwork([]);
    let hung = false;
    let aborted = false;
    network.send = async (m, signal) => {
      network.attempts.push(m);
      if (!hung) {
        hung = true;
        signal?.addEventListener('abort', () => {
          aborted = true;
        });
        return new Promise(() => {}); // never answers, and ignores the signal
      }
      return sandbox.send(m);
    };
    await startWorkers(network, 300);
    const to = newPhone();
    const id = await send(to, 'Hung network');
    await app.settle();
    expect(network.attempts.length).toBe(2);
    expect(aborted).toBe(true);
    expect(sandbox.sent.filter((s) => s.to === to)).toHaveLength(1);
    expect((await getMessage(id)).status).toBe('read');
  });

  it('a receipt that arrives before the network id is saved waits (503) and is applied, not ignored', async () => {
    const sandbox = app.server.network;
    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    const network = failingNetwork([]);
    // The network takes the message (its receipts start) but answers late.
    network.send = async (m) => {
      const accepted = await sandbox.send(m);
      await held;
      return accepted;
    };
    await startWorkers(network);
    const to = newPhone();
    const id = await send(to, 'Early receipts');
    while (!sandbox.sent.some((s) => s.to === to)) await new Promise((r) => setTimeout(r, 5));
    const networkId = sandbox.sent.find((s) => s.to === to)?.networkMessageId as string;
    const early = await fetch(`${app.url}/hooks/network`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-signature': sign(receipt(networkId)) },
      body: receipt(networkId),
    });
    expect(early.status).toBe(503);
    // The patient's reaction to it, as early: held back the same way, then applied.
    const reaction = JSON.stringify({
      type: 'reaction',
      network_message_id: networkId,
      clinic_phone: clinicPhone,
      from: to,
      emoji: '👍',
      at: '2026-11-01T10:00:02Z',
    });
    const post = () =>
      fetch(`${app.url}/hooks/network`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-signature': sign(reaction) },
        body: reaction,
      });
    expect((await post()).status).toBe(503);
    release();
    await app.settle();
    expect((await getMessage(id)).status).toBe('read');
    expect((await post()).status).toBe(200);
    expect((await getMessage(id)).reactions.patient).toBe('👍');
  });
});

const receipt = (networkId: string) =>
  JSON.stringify({
    type: 'receipt',
    network_message_id: networkId,
    clinic_phone: clinicPhone,
    status: 'sent',
    failure_reason: null,
    at: '2026-11-01T10:00:01Z',
  });

const sign = (body: string) => signBody(NETWORK_SECRET, body);

describe("one conversation's sends in order", () => {
  it('a send waits for an earlier message of its conversation that met a transient error, spending none of its attempts', async () => {
    // A retry a second away: pg-boss's group frees the conversation while the first waits in it.
    await app.server.jobs.queue.boss.updateQueue(SEND_QUEUE, { retryDelay: 1, retryBackoff: false });
    const network = failingNetwork([new Error('read ECONNRESET')]);
    const to = newPhone();
    const image = await send(to, 'first (the image)');
    const caption = await send(to, 'second (its caption)');
    await startWorkers(network);
    await app.settle();
    expect(network.attempts.map((a) => a.reference)).toEqual([image, image, caption]);
    expect((await getMessage(image)).status).toBe('read');
    expect((await getMessage(caption)).status).toBe('read');
    // It stepped back (each time a new job, the one before completed), never retried.
    const { rows } = await sql.query<{ state: string; retry_count: number }>(
      `select state, retry_count from pgboss.job where name = $1 and data->>'message' = $2`,
      [SEND_QUEUE, caption.slice(4)],
    );
    expect(rows.length).toBeGreaterThan(1);
    expect(rows.every((r) => r.state === 'completed' && r.retry_count === 0)).toBe(true);
  });

  it('an earlier message that nothing will send (its job lost) does not hold the next one back', async () => {
    const network = failingNetwork([]);
    const to = newPhone();
    const stuck = await send(to, 'never handed over');
    await sql.query(`delete from pgboss.job where name = $1 and data->>'message' = $2`, [
      SEND_QUEUE,
      stuck.slice(4),
    ]);
    const next = await send(to, 'not held back');
    await startWorkers(network);
    // The clock stands still: a send that waited for the stuck one would never go out.
    await waitFor(() => network.attempts.length > 0, 'the next message was held back', 5000);
    await app.settle();
    expect(network.attempts.map((a) => a.reference)).toEqual([next]);
    expect((await getMessage(next)).status).toBe('read');
    expect((await getMessage(stuck)).status).toBe('queued');
    await sql.query(`update message set failed_at = now() where id = $1`, [stuck.slice(4)]);
  });

  it('an earlier message whose job runs only later holds the next one back for at most 15 minutes', {
    timeout: 40_000,
  }, async () => {
    const network = failingNetwork([]);
    const to = newPhone();
    const slow = await send(to, 'its job far off');
    // Its job alive (it will run), but not for a day: a network that stays down looks the same.
    await sql.query(
      `update pgboss.job set start_after = now() + interval '1 day' where name = $1 and data->>'message' = $2`,
      [SEND_QUEUE, slow.slice(4)],
    );
    const next = await send(to, 'held back');
    await startWorkers(network);
    try {
      await new Promise((r) => setTimeout(r, 3000));
      expect(network.attempts).toEqual([]);
      expect(await jobsOf(next)).toContain('chat-send:created');
      app.clock.set('2026-11-01T10:15:00Z');
      await waitFor(() => network.attempts.length > 0, 'not sent after 15 minutes', 10_000);
      expect(network.attempts.map((a) => a.reference)).toEqual([next]);
      // A message recorded over an hour after the slow one does not wait for it at all.
      app.clock.set('2026-11-01T11:30:00Z');
      const later = await send(to, 'much later');
      await waitFor(() => network.attempts.length > 1, 'the later message was held back', 5000);
      expect(network.attempts.map((a) => a.reference)).toEqual([next, later]);
    } finally {
      await sql.query(`delete from pgboss.job where name = $1 and data->>'message' = $2`, [
        SEND_QUEUE,
        slow.slice(4),
      ]);
      await sql.query(`update message set failed_at = now() where id = $1`, [slow.slice(4)]);
    }
    await app.settle();
  });
});

describe('a receipt for a network id not known', () => {
  let other: { clinicId: number; phone: string; write: string };
  beforeAll(async () => {
    const c = await app.clinicWithKey('dental', ['chat:read'], 'receipts clinic');
    other = {
      clinicId: c.clinicId,
      phone: (await app.orm.em.fork().findOneOrFail(Clinic, c.clinicId)).phone as string,
      write: await app.key(c.clinicId, ['chat:write']),
    };
    await syncTemplates(app.orm.em.fork(), c.clinicId, app.server.network);
  });
  const post = (networkId: string) => {
    const body = JSON.stringify({ ...JSON.parse(receipt(networkId)), clinic_phone: other.phone });
    return fetch(`${app.url}/hooks/network`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-signature': sign(body) },
      body,
    });
  };

  it('is ignored while every recent message of the clinic has its network id, sends under way or not', async () => {
    // A send job of the clinic active (as a worker holds it): not a reason to refuse the receipt.
    const boss = app.server.jobs.queue.boss;
    await boss.send(SEND_QUEUE, { message: 0, clinic: other.clinicId });
    const [held] = await boss.fetch(SEND_QUEUE);
    try {
      const r = await post('sbx_unknown_1');
      expect(r.status).toBe(200);
      expect(await r.json()).toMatchObject({ status: 'ignored' });
    } finally {
      await boss.complete(SEND_QUEUE, held.id);
    }
  });

  it('is answered 503 while a recent message has no network id yet, and ignored once it is older than the window', async () => {
    const r = await app.post('/v1/chat/messages', { to: newPhone(), text: 'No worker yet' }, other.write);
    expect(r.status).toBe(202);
    const id = r.body.data.id as string;
    try {
      expect((await post('sbx_unknown_2')).status).toBe(503);
      // Still held half an hour on: a send may wait 15 minutes behind an earlier one, then spend
      // its own attempts (unsent.ts, HANDOFF_WINDOW_MS).
      app.clock.set('2026-11-01T10:30:00Z');
      expect((await post('sbx_unknown_2')).status).toBe(503);
      app.clock.set('2026-11-01T10:36:00Z');
      const late = await post('sbx_unknown_2');
      expect(late.status).toBe(200);
      expect(await late.json()).toMatchObject({ status: 'ignored' });
    } finally {
      await sql.query(`delete from pgboss.job where name = $1 and data->>'message' = $2`, [
        SEND_QUEUE,
        id.slice(4),
      ]);
      await sql.query(`update message set failed_at = now() where id = $1`, [id.slice(4)]);
    }
  });
});
