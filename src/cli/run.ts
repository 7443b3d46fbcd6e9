import type { EntityManager } from '@mikro-orm/postgresql';
import { MikroORM } from '@mikro-orm/postgresql';
import type { Command } from 'commander';
import { ormConfig } from '../../mikro-orm.config.ts';
import { Clinic } from '../entities/clinic.ts';
import { loadConfig } from '../lib/config.ts';
import { migrate, startDatabase } from '../lib/database.ts';
import { AppError } from '../lib/errors.ts';
import { parseIdOr404, toId } from '../lib/ids.ts';
import { attachJobQueue } from '../lib/job-queue.ts';
import { type RunningJobs, startJobs } from '../server/jobs.ts';
import { requireTestClinic } from '../services/clinics/test-mode.ts';

/**
 * What every command of the CLI (src/cli.ts) shares: the database opened and closed around a
 * command's body, the cleanups Ctrl-C runs, the parsers of its arguments and its text output.
 */
export interface Run {
  em: EntityManager;
  json: boolean;
  /** Migrations applied while opening the database. */
  applied: string[];
  /** Prints the command's one result: the object with --json, the text otherwise. */
  out(data: unknown, text: string): void;
}

/** Cleanups of whatever is open, so Ctrl-C also stops the embedded PostgreSQL. */
export const cleanups: (() => Promise<void>)[] = [];

export async function cleanup(): Promise<void> {
  while (cleanups.length) {
    try {
      await cleanups.pop()?.();
    } catch (err) {
      process.stderr.write(`warning: cleanup failed: ${(err as Error).message}\n`);
    }
  }
}

/** Wraps a command body: database up, migrations, the body, database down. */
export function withDb<A extends unknown[]>(body: (run: Run, ...args: A) => Promise<void>) {
  return async (...args: A) => {
    // commander passes (...arguments, options, command); the command knows the global --json.
    const command = args[args.length - 1] as Command;
    const json = Boolean(command.optsWithGlobals().json);
    const config = loadConfig();
    const db = await startDatabase({
      url: config.DATABASE_URL,
      dataDir: config.DATA_DIR,
      port: config.EMBEDDED_PG_PORT,
    });
    cleanups.push(() => db.stop());
    // MikroORM logs (the migrator's progress among them) go to stderr: stdout is the result only.
    const orm = await MikroORM.init(
      // The session address: the CLI migrates and takes the migration lock (src/lib/session-url.ts).
      ormConfig(config.DATABASE_SESSION_URL ?? db.url, {
        debug: false,
        logger: (m: string) => process.stderr.write(`${m}\n`),
      }),
    );
    cleanups.push(() => orm.close(true));
    const applied = await migrate(orm);
    // A write whose events have subscribers queues their deliveries: the queue starts then, once.
    let jobs: Promise<RunningJobs> | undefined;
    attachJobQueue(orm.em, async () => {
      jobs ??= startJobs({ orm });
      return (await jobs).queue;
    });
    cleanups.push(async () => (jobs ? (await jobs).stop(0) : undefined));
    const out = (data: unknown, text: string) => {
      process.stdout.write(json ? `${JSON.stringify(data)}\n` : `${text}\n`);
    };
    await body({ em: orm.em.fork(), json, applied, out }, ...args);
    await cleanup();
  };
}

/** Accepts the public id (`cln_3`) or the bare number. */
export function clinicId(value: string): number {
  return /^[1-9][0-9]*$/.test(value) ? Number(value) : parseIdOr404('Clinic', value, 'clinic');
}

/**
 * The clinic a sandbox command plays the outside world for: a test clinic only (docs/test-mode.md),
 * so no made-up patient, reaction, template or call ever reaches a live clinic.
 */
export async function testClinic(em: EntityManager, value: string, command: string): Promise<Clinic> {
  const id = clinicId(value);
  const c = await em.findOne(Clinic, id);
  if (!c) throw new AppError('not_found', `No clinic with id '${toId('Clinic', id)}'.`);
  requireTestClinic(c.mode, command);
  return c;
}

export function nonNegativeInt(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0)
    throw new AppError('validation_failed', `Expected a whole number of 0 or more, got '${value}'.`);
  return n;
}

export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1)
    throw new AppError('validation_failed', `Expected a positive integer, got '${value}'.`);
  return n;
}

/** Plain aligned columns for humans; --json is the format for programs. */
export function table(rows: Record<string, unknown>[], columns: string[]): string {
  if (!rows.length) return '(none)';
  const cell = (v: unknown) => (v == null ? '-' : Array.isArray(v) ? v.join(',') : String(v));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(columns), ...rows.map((r) => line(columns.map((c) => cell(r[c]))))].join('\n');
}

export const countWord = (n: number) => ['no', 'one', 'two', 'three', 'four', 'five', 'six'][n] ?? String(n);
