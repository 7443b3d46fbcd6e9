/**
 * The benchmark's server processes (the app, the raw server, PostGraphile, and the app started to
 * capture its statements): each a child on loopback with an IPC channel (bench/child.ts), always
 * killed when the harness ends, whatever happens.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildMessage, MemoryReport } from './child.ts';

const here = path.dirname(fileURLToPath(import.meta.url));

export type ServerName = 'app' | 'raw' | 'postgraphile' | 'capture';

const files: Record<ServerName, string> = {
  app: 'server.ts',
  capture: 'server.ts',
  raw: 'raw-server.ts',
  postgraphile: 'postgraphile/server.ts',
};

const children = new Set<ChildProcess>();

export function killChildren() {
  for (const c of children) {
    if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
  }
}
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    killChildren();
    process.exit(130);
  });
}

export interface Server {
  name: ServerName;
  url: string;
  child: ChildProcess;
  /** Peak and current resident set size in bytes, from /proc/<pid>/status. */
  rss(): { peak: number; now: number };
  /** The child's process.memoryUsage(), over IPC. */
  memory(gc?: boolean): Promise<MemoryReport>;
  /** Sends `type` and waits for the child's message of type `reply`. */
  ask<T>(type: string, reply: string): Promise<T>;
  stop(): Promise<void>;
}

export async function startServer(
  name: ServerName,
  databaseUrl: string,
  extra: { cpuProfDir?: string; flags?: string[]; env?: Record<string, string> } = {},
): Promise<Server> {
  const file = path.join(here, files[name]);
  const flags = ['--disable-warning=ExperimentalWarning', '--expose-gc', ...(extra.flags ?? [])];
  if (extra.cpuProfDir) flags.push('--cpu-prof', `--cpu-prof-dir=${extra.cpuProfDir}`);
  const child = spawn(process.execPath, [...flags, file], {
    // The app logs a line per request to stdout, as in production; it goes to /dev/null here.
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: {
      ...process.env,
      BENCH_DATABASE_URL: databaseUrl,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
      GRAPHILE_ENV: 'production',
      ...extra.env,
    },
  });
  children.add(child);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} server did not start within 30 s`)), 30_000);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} server exited during startup (code ${code}, signal ${signal})`));
    });
    child.on('message', (m: ChildMessage) => {
      if (m.type === 'ready') {
        clearTimeout(timer);
        resolve(m.url);
      }
    });
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ask = <T>(type: string, reply: string, message: object = {}) =>
    new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${name} server did not answer ${type}`)), 5000);
      const on = (m: any) => {
        if (m?.type !== reply) return;
        clearTimeout(timer);
        child.off('message', on);
        resolve(m as T);
      };
      child.on('message', on);
      child.send({ ...message, type });
    });
  return {
    name,
    url,
    child,
    rss() {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const kb = (key: string) =>
        Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
      return { peak: kb('VmHWM'), now: kb('VmRSS') };
    },
    memory(gc = false) {
      // A memory report is the only message of type 'memory' that carries `rss`.
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${name} server did not report its memory`)), 5000);
        const on = (m: ChildMessage) => {
          if (m.type !== 'memory' || !('rss' in m)) return;
          clearTimeout(timer);
          child.off('message', on);
          resolve(m);
        };
        child.on('message', on);
        const q: ChildMessage = { type: 'memory', gc };
        child.send(q);
      });
    },
    ask: (type, reply) => ask(type, reply),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
      children.delete(child);
    },
  };
}

/**
 * PostGraphile's packages, the bench's own (bench/postgraphile/package.json and its lockfile):
 * `npm ci` there when they are missing or were installed from another lockfile. Never part of
 * the project's `npm install`.
 */
export function ensurePostgraphileInstalled(): void {
  const dir = path.join(here, 'postgraphile');
  const lock = readFileSync(path.join(dir, 'package-lock.json'));
  const want = createHash('sha256').update(lock).digest('hex');
  const stamp = path.join(dir, 'node_modules', '.bench-lock-sha256');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === want) return;
  console.log('installing PostGraphile for the bench (npm ci --prefix bench/postgraphile)...');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  execFileSync(npm, ['ci', '--prefix', dir, '--no-audit', '--no-fund'], { stdio: 'inherit' });
  writeFileSync(stamp, want);
}
