import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { until } from './ws-client.ts';

/** `npm run cli -- events listen …` as a child process, and a loopback receiver for it. */
export const root = path.resolve(import.meta.dirname, '..');
export const node = path.join(root, 'node_modules/.bin/node');

export interface ListenProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** The secret of the ready line (waits for it). */
  ready(ms?: number): Promise<string>;
  /** The exit code (SIGTERM: 130). */
  exited: Promise<number | null>;
  stop(): Promise<number | null>;
}

/** `configHome` is the child's XDG_CONFIG_HOME: where it keeps the seed of its secrets. */
export function listen(args: string[], configHome: string): ListenProcess {
  const child = spawn(node, ['src/cli.ts', 'events', 'listen', ...args], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'warn', XDG_CONFIG_HOME: configHome },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  child.stderr?.on('data', (d) => {
    err += d;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    async ready(ms = 15_000) {
      await until(() => /Signing secret: \S+/.test(out) || child.exitCode !== null, ms).catch(() => {});
      const secret = /Signing secret: (\S+)/.exec(out)?.[1];
      if (!secret) throw new Error(`no ready line; stdout: ${out} stderr: ${err}`);
      return secret;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

export interface Receiver {
  url: string;
  received: { body: string; headers: http.IncomingHttpHeaders }[];
  /** How many times each event id arrived. */
  counts: Map<string, number>;
  close(): Promise<void>;
}

/** A real HTTP server on loopback that answers `status(n)` to the n-th POST (1-based; 200 by default). */
export async function startReceiver(status: (n: number) => number = () => 200): Promise<Receiver> {
  const received: Receiver['received'] = [];
  const counts = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      received.push({ body: Buffer.concat(chunks).toString('utf8'), headers: req.headers });
      const id = String(req.headers['x-service-event-id']);
      counts.set(id, (counts.get(id) ?? 0) + 1);
      res.writeHead(status(received.length)).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    counts,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** The spec's "Verification": HMAC-SHA256 of the raw body, compared in constant time. */
export const verify = (secret: string, raw: string, header: string | undefined) => {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`);
  const got = Buffer.from(header ?? '');
  return got.length === expected.length && timingSafeEqual(got, expected);
};
