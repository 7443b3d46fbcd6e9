import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.ts';

/** Debian's PgBouncer (`.ci/run` installs the `pgbouncer` package), or null when it is not here. */
export function pgbouncerBinary(): string | null {
  for (const p of ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer']) {
    try {
      execFileSync(p, ['--version'], { stdio: 'ignore' });
      return p;
    } catch {}
  }
  return null;
}

export interface Pooler {
  /** `databaseUrl` with its host and port replaced by the pooler's. */
  through(databaseUrl: string): string;
  close(): Promise<void>;
}

/**
 * A real PgBouncer in transaction mode (the pooler most hosted PostgreSQL puts in front) on a free
 * loopback port, in front of `serverUrl`'s server: every database, trust authentication towards
 * the client, the server's own credentials towards PostgreSQL. `ignoreStartupParameters` is what
 * an operator adds when a client sends parameters PgBouncer refuses.
 */
export async function startPgBouncer(
  serverUrl: string,
  opts: { ignoreStartupParameters?: string[]; poolSize?: number } = {},
): Promise<Pooler> {
  const binary = pgbouncerBinary();
  if (!binary) throw new Error('pgbouncer is not installed (apt-get install pgbouncer)');
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username || 'postgres');
  const password = decodeURIComponent(server.password);
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'cg-pgbouncer-'));
  // PgBouncer refuses to run as root; as root it runs as postgres, which must read its files.
  chmodSync(dir, 0o755);
  const users = path.join(dir, 'users.txt');
  writeFileSync(users, `"${user}" ""\n`, { mode: 0o644 });
  const ini = path.join(dir, 'pgbouncer.ini');
  writeFileSync(
    ini,
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432} user=${user}${password ? ` password=${password}` : ''}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${users}`,
      'pool_mode = transaction',
      'max_client_conn = 1000',
      `default_pool_size = ${opts.poolSize ?? 20}`,
      ...(opts.ignoreStartupParameters?.length
        ? [`ignore_startup_parameters = ${opts.ignoreStartupParameters.join(',')}`]
        : []),
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  const asRoot = process.getuid?.() === 0;
  const child: ChildProcess = spawn(binary, [...(asRoot ? ['-u', 'postgres'] : []), ini], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr?.on('data', (d) => {
    log = (log + d).slice(-4000);
  });
  await waitForPort(port, child, () => log);
  return {
    through(databaseUrl) {
      const u = new URL(databaseUrl);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      u.password = '';
      return u.toString();
    },
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitForPort(port: number, child: ChildProcess, log: () => string): Promise<void> {
  const end = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited: ${log()}`);
    const open = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > end) throw new Error(`pgbouncer did not listen on ${port}: ${log()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
