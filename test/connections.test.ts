import net from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * Connections are bounded (docs/limits.md, Connections), each point tried with a slow client over
 * a real socket: slow headers are cut at the headers timeout, a body still arriving after its
 * response (413, 504) is not read on, and there are at most maxConnections connections.
 */
let app: TestApp;
let key: string;
const LIMITS = {
  headersTimeoutMs: 500,
  requestTimeoutMs: 4000,
  requestDeadlineMs: 1000,
  maxBodyBytes: 64 * 1024,
};

beforeAll(async () => {
  app = await startTestApp({ limits: LIMITS });
  ({ key } = await app.clinicWithKey('dental', ['chat:write']));
});

interface RawClient {
  socket: net.Socket;
  /** What the server sent so far. */
  received(): string;
  /** Bytes this client managed to write before the connection ended. */
  written(): number;
  /** Resolves with the milliseconds from connecting to the connection's end, or null after `ms`. */
  closed(ms: number): Promise<number | null>;
  /** Writes `chunk` every `everyMs` until the connection ends. */
  trickle(chunk: string | Buffer, everyMs: number): void;
}

async function connect(port: number): Promise<RawClient> {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const started = performance.now();
  let text = '';
  let written = 0;
  let endedAt: number | null = null;
  const ended = new Promise<void>((resolve) => {
    const end = () => {
      endedAt ??= performance.now() - started;
      resolve();
    };
    socket.on('close', end);
    socket.on('end', end);
  });
  socket.on('error', () => {});
  socket.on('data', (d) => {
    text += d.toString('latin1');
  });
  const timers: NodeJS.Timeout[] = [];
  ended.then(() => {
    for (const t of timers) clearInterval(t);
  });
  return {
    socket,
    received: () => text,
    written: () => written,
    async closed(ms) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([ended, new Promise((r) => (timer = setTimeout(r, ms)))]);
      clearTimeout(timer);
      if (endedAt === null) socket.destroy();
      return endedAt;
    },
    trickle(chunk, everyMs) {
      const write = () => {
        if (socket.destroyed || socket.writableEnded) return;
        socket.write(chunk, () => {});
        written += chunk.length;
      };
      write();
      timers.push(setInterval(write, everyMs));
    },
  };
}

const port = () => Number(new URL(app.url).port);
const post = (path: string, length: number, extra = '') =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${extra}\r\n`;

describe('a slow client', () => {
  it('sending its headers a line at a time is cut at the headers timeout', async () => {
    const c = await connect(port());
    c.socket.write('GET /v1/chat/conversations HTTP/1.1\r\nHost: x\r\n');
    c.trickle('X-Slow: 1\r\n', 200);
    const closedAt = await c.closed(5000);
    expect(closedAt).not.toBeNull();
    // The timeout, and at most the one-second check after it.
    expect(closedAt).toBeLessThan(LIMITS.headersTimeoutMs + 1500);
    expect(c.received()).toMatch(/^HTTP\/1\.1 408/);
  });

  it('trickling its body gets the 504 at the deadline, and its connection ends there', async () => {
    const c = await connect(port());
    c.socket.write(post('/v1/chat/messages', 1000));
    c.trickle('{', 200);
    const closedAt = await c.closed(5000);
    expect(c.received()).toMatch(/^HTTP\/1\.1 504/);
    expect(c.received()).toMatch(/connection: close/i);
    expect(closedAt).not.toBeNull();
    expect(closedAt).toBeLessThan(LIMITS.requestDeadlineMs + 1000);
  });

  it('trickling its body is cut at the request timeout when that comes before the deadline', async () => {
    const strict = await startTestApp({
      limits: { headersTimeoutMs: 500, requestTimeoutMs: 1000, requestDeadlineMs: 10_000 },
    });
    const c = await connect(Number(new URL(strict.url).port));
    c.socket.write(post('/hooks/network', 1000));
    c.trickle('{', 200);
    const closedAt = await c.closed(5000);
    expect(c.received()).toMatch(/^HTTP\/1\.1 408/);
    expect(closedAt).not.toBeNull();
    expect(closedAt).toBeLessThan(1000 + 1500);
  });

  it('a body over the cap gets its 413 and no more of it is read', async () => {
    const c = await connect(port());
    c.socket.write(post('/v1/chat/messages', 10 * 1024 * 1024));
    c.trickle(Buffer.alloc(64 * 1024, 0x20), 5);
    const closedAt = await c.closed(5000);
    expect(c.received()).toMatch(/^HTTP\/1\.1 413/);
    expect(closedAt).not.toBeNull();
    // Without the close the server reads all 10 MiB (a keep-alive connection drains its body).
    expect(c.written()).toBeLessThan(4 * 1024 * 1024);
  });

  it('reading its 413 a moment late still gets it: the connection is not reset under it', async () => {
    const c = await connect(port());
    // The client reads nothing for 50 ms while it sends: a reset in that time would discard the 413.
    c.socket.pause();
    c.socket.write(post('/v1/chat/messages', 10 * 1024 * 1024));
    c.trickle(Buffer.alloc(16 * 1024, 0x20), 2);
    await new Promise((r) => setTimeout(r, 50));
    c.socket.resume();
    expect(await c.closed(5000)).not.toBeNull();
    expect(c.received()).toMatch(/^HTTP\/1\.1 413/);
    expect(c.written()).toBeLessThan(4 * 1024 * 1024);
  });

  it('answered before its body arrived (a 401 first) is not kept alive to drain the body', async () => {
    const c = await connect(port());
    c.socket.write(post('/v1/chat/messages', 1000).replace(key, 'cg_live_wrong'));
    c.trickle('x', 100);
    const closedAt = await c.closed(3000);
    expect(c.received()).toMatch(/^HTTP\/1\.1 401/);
    expect(closedAt).not.toBeNull();
    expect(closedAt).toBeLessThan(1000);
  });

  it('that sent its whole request stays a keep-alive connection', async () => {
    const c = await connect(port());
    c.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await c.closed(300)).toBeNull();
    expect(c.received()).toMatch(/^HTTP\/1\.1 200[\s\S]*keep-alive/i);
  });
});

describe('the number of connections', () => {
  it('is at most maxConnections: one more is closed at once, a freed place is taken again', async () => {
    const small = await startTestApp({ limits: { maxConnections: 2 } });
    const p = Number(new URL(small.url).port);
    const a = await connect(p);
    const b = await connect(p);
    const c = await connect(p);
    expect(await c.closed(1000)).not.toBeNull();
    a.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((r) => setTimeout(r, 100));
    expect(a.received()).toMatch(/^HTTP\/1\.1 200/);
    b.socket.destroy();
    await new Promise((r) => setTimeout(r, 100));
    const d = await connect(p);
    d.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await d.closed(300)).toBeNull();
    expect(d.received()).toMatch(/^HTTP\/1\.1 200/);
    a.socket.destroy();
    d.socket.destroy();
  });
});
