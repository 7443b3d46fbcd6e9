import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MAX_SOCKETS_PER_HOST, sendDelivery } from '../src/webhooks/send.ts';

/**
 * An attempt's deadline runs from when it has a socket (src/webhooks/send.ts): while every socket
 * to a host is held by slow attempts, the next one waits for a socket without its deadline
 * running, so a healthy answer after the wait is not a false timeout.
 */
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    // /slow: answers after 900 ms (holds its socket); /fast: after 300 ms.
    const ms = req.url === '/slow' ? 900 : 300;
    setTimeout(() => res.writeHead(204).end(), ms);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const send = (path: string, timeoutMs: number) =>
  sendDelivery(`${base}${path}`, '{}', { 'content-type': 'application/json' }, { timeoutMs, mode: 'test' });

it('waiting for a socket does not count against the deadline', async () => {
  const slow = Array.from({ length: MAX_SOCKETS_PER_HOST }, () => send('/slow', 5000));
  // Every socket to the host is taken: this one gets one at about 900 ms and its answer 300 ms later,
  // past 1,000 ms from the call but well within 1,000 ms of having its socket.
  const fast = await send('/fast', 1000);
  expect(fast.error).toBeNull();
  expect(fast.ok).toBe(true);
  expect(fast.durationMs).toBeGreaterThanOrEqual(1100);
  expect((await Promise.all(slow)).every((r) => r.ok)).toBe(true);
});

it('the wait for a socket is bounded too: not sent, said so', async () => {
  const slow = Array.from({ length: MAX_SOCKETS_PER_HOST }, () => send('/slow', 5000));
  // Its wait is at most 3 deadlines (3 × 100 ms), shorter than the 900 ms the sockets are held.
  const waited = await send('/fast', 100);
  expect(waited.ok).toBe(false);
  expect(waited.error).toMatch(/No connection to the receiver's host was free within 300 ms/);
  await Promise.all(slow);
});
