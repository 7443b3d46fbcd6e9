import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openOrm } from '../src/db/orm.ts';
import { migrate, startDatabase } from '../src/lib/database.ts';
import { installJobs } from '../src/server/jobs.ts';

/**
 * One PostgreSQL for the run (DATABASE_URL's server, or an embedded one), and one migrated
 * template database of the run's own. Each test file clones the template into a database of its own, so files
 * run in parallel without sharing state.
 */
export default async function setup(project: TestProject) {
  const external = process.env.DATABASE_URL;
  const db = await startDatabase({
    url: external,
    dataDir: '.data/test',
    port: Number(process.env.TEST_PG_PORT ?? 54339),
    database: 'postgres',
  });
  const admin = new URL(db.url);
  admin.pathname = '/postgres';
  // Test files name their databases after this run, so the teardown drops every one of them,
  // the run's template included (a file's own clean-up, registered from inside beforeAll, is
  // not run by vitest). A run leaves no database behind.
  const runId = randomBytes(4).toString('hex');
  const template = `cg_t_${runId}_template`;
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`create database "${template}"`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${template}`;
  const orm = await openOrm(url.toString());
  await migrate(orm);
  // The queue's schema and queues too, so no test file's app creates them again.
  await installJobs(orm);
  await orm.close();
  project.provide('adminUrl', admin.toString());
  project.provide('templateDb', template);
  project.provide('runId', runId);
  return async () => {
    const c = new pg.Client({ connectionString: admin.toString() });
    await c.connect();
    const { rows } = await c.query<{ datname: string }>(
      'select datname from pg_database where datname like $1',
      [`cg_t_${runId}_%`],
    );
    for (const { datname } of rows) await c.query(`drop database if exists "${datname}" with (force)`);
    await c.end();
    await db.stop();
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    adminUrl: string;
    templateDb: string;
    runId: string;
  }
}
