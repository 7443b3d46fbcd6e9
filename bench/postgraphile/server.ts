/**
 * PostGraphile 5 as a competitor: schema bench_pg (bench/postgraphile/schema.sql, views of the
 * clinic's tables filtered by the request's clinic) served by PostGraphile's Amber preset through
 * grafserv on node:http. Started by bench/patients.ts as a child process like the app and the raw
 * server (same IPC: bench/child.ts). Its packages are the bench's own (bench/postgraphile/
 * package.json), so they are imported by name at run time: the project's tsc checks this file
 * without them.
 *
 * Auth as the app's and the raw server's: the bearer key's sha256 looked up in api_key, verdicts
 * cached 5 s per process; the key's clinic goes to PostgreSQL as bench.clinic_id (PostGraphile's
 * pgSettings, set in the request's transaction).
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serveUntilParentLeaves } from '../child.ts';

const url = process.env.BENCH_DATABASE_URL;
if (!url) throw new Error('BENCH_DATABASE_URL is not set');

// Specifiers in variables: typed `any`, so `npm run check` needs none of these packages.
const load = (specifier: string): Promise<any> => import(specifier);
const [{ postgraphile }, { PostGraphileAmberPreset }, { makePgService }, { grafserv }, pgModule] =
  await Promise.all([
    load('postgraphile'),
    load('postgraphile/presets/amber'),
    load('postgraphile/adaptors/pg'),
    load('postgraphile/grafserv/node'),
    load('pg'),
  ]);
const pg = pgModule.default ?? pgModule;

const POOL_MAX = Number(process.env.BENCH_POOL_MAX ?? 10);
const auth = new pg.Pool({ connectionString: url, max: 2 });

const KEY_TTL_MS = 5000;
const keyCache = new Map<string, { clinicId: number | null; until: number }>();

async function clinicOf(header: string | undefined): Promise<number | null> {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (!m) return null;
  const hash = createHash('sha256').update(m[1]).digest('hex');
  const now = Date.now();
  const hit = keyCache.get(hash);
  if (hit && hit.until > now) return hit.clinicId;
  const { rows } = await auth.query({
    name: 'bench_pg_key',
    text: 'select clinic_id, revoked_at from api_key where hash = $1 limit 1',
    values: [hash],
  });
  const clinicId = rows[0] && !rows[0].revoked_at ? (rows[0].clinic_id as number) : null;
  if (keyCache.size > 10_000) keyCache.clear();
  keyCache.set(hash, { clinicId, until: now + KEY_TTL_MS });
  return clinicId;
}

const preset = {
  extends: [PostGraphileAmberPreset],
  // Read access only, as the app's read cases: no mutations in the schema (simple views are
  // updatable, so Amber would offer create/update/delete on each), and read-only transactions.
  schema: { defaultBehavior: '-insert -update -delete' },
  pgServices: [
    makePgService({
      connectionString: url,
      schemas: ['bench_pg'],
      poolConfig: { max: POOL_MAX, options: '-c default_transaction_read_only=on' },
    }),
  ],
  grafserv: { graphqlPath: '/graphql', graphiql: false, watch: false, maxRequestLength: 1_000_000 },
  grafast: {
    // No key, an unknown or a revoked one: a clinic no row has, so every list is empty (the
    // bench's checks then fail), rather than PostGraphile's unfiltered views.
    async context(ctx: any) {
      const clinicId = await clinicOf(ctx.node?.req?.headers?.authorization);
      return { pgSettings: { 'bench.clinic_id': String(clinicId ?? 0) } };
    },
  },
};

const pgl = postgraphile(preset);
const serv = pgl.createServ(grafserv);
const server = createServer();
await serv.addTo(server);
server.keepAliveTimeout = 65_000;
await new Promise<void>((resolve, reject) => {
  server.once('error', reject);
  server.listen(0, '127.0.0.1', () => resolve());
});
const { port } = server.address() as AddressInfo;

serveUntilParentLeaves(`http://127.0.0.1:${port}`, async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await pgl.release();
  await auth.end();
});
