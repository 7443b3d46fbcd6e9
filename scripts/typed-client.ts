/**
 * The dashboard example's typed client (examples/dashboard-client, issue 27), generated the way a
 * dashboard developer generates it: GraphQL Code Generator's client preset reading the schema
 * from a served /graphql. This script serves one itself, in-process on a free loopback port (the
 * way the tests start the app), on a database of its own (DATABASE_URL's server, or the embedded
 * PostgreSQL), then compiles the example with its strict tsconfig.
 *
 *   node scripts/typed-client.ts           regenerate examples/dashboard-client/src/gql, then compile
 *   node scripts/typed-client.ts --check   write nothing; exit 1 when src/gql's types are stale; then compile
 *
 * src/gql is committed: the root type check and the tests (test/typed-client.test.ts) import the
 * example, and must work on a fresh clone before anything has been generated; a schema change
 * then shows in review as a diff of the client's types, as it does in schema.graphql.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { openOrm } from '../src/db/orm.ts';
import { loadConfig } from '../src/lib/config.ts';
import { ensureDatabase, migrate, startDatabase } from '../src/lib/database.ts';
import { logger } from '../src/lib/logger.ts';
import { startHttpServer } from '../src/server/start.ts';
import { compareTypedClient, filesOnDisk, generated, generateTypedClient } from './typed-client-files.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const example = path.join(root, 'examples/dashboard-client');

/** The client preset's files, generated from the /graphql of a service started for it. */
async function generateFromServedSchema(): Promise<Map<string, string>> {
  // The service's request lines are not this script's output.
  logger.level = process.env.LOG_LEVEL ?? 'warn';
  const config = loadConfig();
  const db = await startDatabase({
    url: config.DATABASE_URL,
    dataDir: config.DATA_DIR,
    port: config.EMBEDDED_PG_PORT,
  });
  const admin = new URL(db.url);
  admin.pathname = '/postgres';
  const name = `cg_typed_client_${randomBytes(4).toString('hex')}`;
  const url = new URL(admin);
  url.pathname = `/${name}`;
  try {
    await ensureDatabase(admin.toString(), name);
    try {
      const migrating = await openOrm(url.toString(), { requestTimeouts: false });
      await migrate(migrating).finally(() => migrating.close());
      const orm = await openOrm(url.toString());
      try {
        const server = await startHttpServer({ orm, port: 0, roles: [] });
        try {
          return await generateTypedClient(`${server.url}/graphql`);
        } finally {
          await server.close();
        }
      } finally {
        await orm.close();
      }
    } finally {
      const c = new pg.Client({ connectionString: admin.toString() });
      await c.connect();
      await c.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
      await c.end();
    }
  } finally {
    await db.stop();
  }
}

async function main(argv: string[]): Promise<number> {
  const check = argv.includes('--check');
  const unknown = argv.filter((a) => a !== '--check');
  if (unknown.length) {
    console.error(
      `typed-client: unknown argument(s) ${unknown.join(' ')}. Usage: node scripts/typed-client.ts [--check]`,
    );
    return 2;
  }
  const fresh = await generateFromServedSchema();
  const current = filesOnDisk();
  const { stale, wrongTypes } = compareTypedClient(fresh, current);
  const upToDate = 'typed-client: examples/dashboard-client/src/gql is up to date with the served schema.';
  if (check) {
    if (wrongTypes.length) {
      console.error(
        `typed-client: ${wrongTypes.join(', ')} ${wrongTypes.length === 1 ? 'is' : 'are'} out of date with the served schema.\n` +
          'Run `npm run typed-client` (node scripts/typed-client.ts) and commit the result.',
      );
      return 1;
    }
    console.log(
      stale.length
        ? `typed-client: the types in ${stale.join(', ')} agree with the served schema, their descriptions are older; \`npm run typed-client\` refreshes them.`
        : upToDate,
    );
  } else if (stale.length) {
    mkdirSync(generated, { recursive: true });
    for (const [file] of current) if (!fresh.has(file)) rmSync(file);
    for (const [file, content] of fresh) writeFileSync(file, content);
    console.log(`typed-client: wrote ${stale.join(', ')}.`);
  } else console.log(upToDate);
  const tsc = spawnSync(
    process.execPath,
    [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.relative(root, example)],
    { cwd: root, stdio: 'inherit' },
  );
  if (tsc.status !== 0) {
    console.error('typed-client: the dashboard example does not compile against the generated types.');
    return 1;
  }
  return 0;
}

/** Codegen's errors (an operation the served schema refuses) without its task runner's stacks. */
function reasonOf(err: unknown): string {
  const errors = err instanceof AggregateError ? err.errors : [err];
  return errors.map((e) => (e instanceof Error ? e.message : String(e))).join('\n');
}

process.exitCode = await main(process.argv.slice(2)).catch((err: unknown) => {
  console.error(`typed-client: ${reasonOf(err)}`);
  return 1;
});
