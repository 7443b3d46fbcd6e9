import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';

/**
 * A real PgBouncer in front of a database, for the benchmarks' `--pooler` runs (bench/patients.ts,
 * bench/deliveries.ts, bench/fanout.ts) and the multi-process tests (test/cluster.test.ts,
 * test/pooler.test.ts, test/caps-processes.test.ts). It lives in bench/ so that the benchmarks
 * need nothing from test/ (the tests already import bench/ helpers).
 */

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
  /** PgBouncer's process id (the benches read its CPU time). */
  pid: number;
  /** `databaseUrl` with its host and port replaced by the pooler's. */
  through(databaseUrl: string): string;
  close(): Promise<void>;
  /**
   * From PgBouncer's admin console (SHOW STATS, SHOW POOLS) for `database`: the transactions it
   * has passed since it started, and its server connections open to PostgreSQL now (pool size
   * caps them) and its clients now.
   */
  stats(database: string): Promise<{ transactions: number; serverConnections: number; clients: number }>;
  /** SIGKILLs it at once (a bench's exit handler: nothing may outlive the bench). */
  kill(): void;
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
      `stats_users = ${user}`,
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
    pid: child.pid as number,
    through(databaseUrl) {
      const u = new URL(databaseUrl);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      u.password = '';
      return u.toString();
    },
    async stats(database) {
      const admin = new pg.Client({ host: '127.0.0.1', port, user, database: 'pgbouncer' });
      await admin.connect();
      try {
        const stats = (await admin.query('SHOW STATS')).rows.find((r) => r.database === database);
        const pools = (await admin.query('SHOW POOLS')).rows.filter((r) => r.database === database);
        const sum = (keys: string[]) =>
          pools.reduce((n, r) => n + keys.reduce((m, k) => m + Number(r[k] ?? 0), 0), 0);
        return {
          transactions: Number(stats?.total_xact_count ?? 0),
          serverConnections: sum(['sv_active', 'sv_idle', 'sv_used', 'sv_tested', 'sv_login']),
          clients: sum(['cl_active', 'cl_waiting']),
        };
      } finally {
        await admin.end();
      }
    },
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
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

/**
 * What a bench's `--pooler` flag starts: PgBouncer in transaction mode in front of `serverUrl`'s
 * server (killed when the bench exits, however it exits); without the flag, null (today's runs).
 * The bench then gives its service children `through(url)` as their database and `url` as their
 * session address (DATABASE_SESSION_URL, src/lib/session-url.ts).
 */
export async function benchPooler(on: boolean, serverUrl: string, poolSize: number): Promise<Pooler | null> {
  if (!on) return null;
  const pooler = await startPgBouncer(serverUrl, { poolSize });
  process.on('exit', () => pooler.kill());
  return pooler;
}

/** One line for a bench's output: whether its service processes went through the pooler. */
export function poolerLine(pooler: Pooler | null, poolSize: number): string {
  return pooler
    ? `pooler: PgBouncer ${pgbouncerVersion()} in transaction mode (default_pool_size ${poolSize}), DATABASE_URL through it, DATABASE_SESSION_URL direct`
    : 'pooler: none (DATABASE_URL direct to PostgreSQL)';
}

function pgbouncerVersion(): string {
  const binary = pgbouncerBinary();
  if (!binary) return '?';
  const out = execFileSync(binary, ['--version'], { encoding: 'utf8' });
  return /PgBouncer\s+(\S+)/.exec(out)?.[1] ?? '?';
}

/** A loopback port the OS has just found free (test/free-port.ts's, which bench/ does not import). */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = net.createServer().once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });

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
