/**
 * `npm run bench:abuse`: fairness under abuse, with the service's default limits.
 *
 *   1. Database `cg_abuse` on DATABASE_URL's server (else postgresql://postgres@127.0.0.1:5432):
 *      an attacking veterinary clinic of 3,000 animals with appointments and a victim dental
 *      clinic of 1,000 patients, seeded once; fresh keys each run.
 *   2. The app (bench/server.ts, BENCH_LIMITS=default) in a child process.
 *   3. The victim reads `GET /v1/patients?limit=25` 15 times a second (within its budget), alone, then
 *      while the attacker sends, on 64 connections, the heaviest GraphQL query the limits allow
 *      (a page of 100 patients, each with as many appointments as fit under the cost limit).
 *   4. Prints the victim's p50/p99 both ways, the attacker's answers (200 vs 429) and the
 *      server's peak RSS. Aim: loaded p99 at most 3 × unloaded, peak RSS under 400 MB.
 *
 * Options: --duration=20 (seconds per phase) --attackers=64
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon, { type Options, type Result } from 'autocannon';
import { parse } from 'graphql';
import { createApiKey } from '../src/auth/keys.ts';
import { readScopes } from '../src/auth/scopes.ts';
import { seedPatients } from '../src/demo/seed-patients.ts';
import { Clinic } from '../src/entities/index.ts';
import { ensureDatabase, migrate, openOrm } from '../src/lib/database.ts';
import { defaultLimits } from '../src/lib/limits.ts';
import { costOf } from '../src/schema/cost.ts';
import { schemas } from '../src/schema/index.ts';
import { createClinic } from '../src/services/clinics/clinics.ts';
import type { ChildMessage } from './child.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values: opts } = parseArgs({
  options: {
    duration: { type: 'string', default: '20' },
    attackers: { type: 'string', default: '64' },
  },
});
const DURATION = Number(opts.duration);
const ATTACKERS = Number(opts.attackers);
const DB = 'cg_abuse';

function urls() {
  const base = new URL(process.env.DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432');
  const admin = new URL(base);
  admin.pathname = '/postgres';
  const bench = new URL(base);
  bench.pathname = `/${DB}`;
  return { admin: admin.toString(), bench: bench.toString() };
}

async function prepare(benchUrl: string, adminUrl: string) {
  await ensureDatabase(adminUrl, DB);
  const orm = await openOrm(benchUrl);
  try {
    await migrate(orm);
    const em = orm.em.fork();
    const clinic = async (name: string, kind: 'dental' | 'veterinary', patients: number) => {
      let c = await em.findOne(Clinic, { name });
      if (!c) {
        c = await createClinic(em, { name, kind, mode: 'test', country: 'IL', timezone: 'Asia/Jerusalem' });
        console.log(`seeding ${patients} patients into ${name}...`);
        await seedPatients(em.fork(), c.id, patients);
      }
      await em.execute("delete from api_key where clinic_id = ? and name = 'abuse'", [c.id], 'run');
      return (await createApiKey(em.fork(), { clinicId: c.id, name: 'abuse', scopes: [...readScopes] })).key;
    };
    const attacker = await clinic('Abuse attacker', 'veterinary', 3000);
    const victim = await clinic('Abuse victim', 'dental', 1000);
    await em.execute('vacuum analyze patient, owner, appointment', [], 'run');
    return { attacker, victim };
  } finally {
    await orm.close();
  }
}

/** The heaviest query under the cost limit: 100 patients, each with as many appointments as fit. */
function heaviestQuery(): { query: string; cost: number } {
  const { publicSchema } = schemas();
  let best = { query: '', cost: 0 };
  for (let n = 1; n <= 100; n++) {
    const query = `{ patients(first: 100) { edges { node { id firstName lastName phone email owner { id firstName lastName } species { id name } appointments(first: ${n}) { edges { node { id start end note status { name color } type { name } provider { name } branch { name } } } } } } } }`;
    const cost = costOf(publicSchema, parse(query), {}, undefined);
    if (cost > defaultLimits.graphqlMaxCost) break;
    best = { query, cost };
  }
  return best;
}

async function startApp(benchUrl: string): Promise<{ url: string; child: ChildProcess; peakRss(): number }> {
  const child = spawn(
    process.execPath,
    ['--disable-warning=ExperimentalWarning', path.join(here, 'server.ts')],
    {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      env: { ...process.env, BENCH_DATABASE_URL: benchUrl, BENCH_LIMITS: 'default', LOG_LEVEL: 'warn' },
    },
  );
  process.on('exit', () => child.kill('SIGKILL'));
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', () => reject(new Error('the app exited during startup')));
    child.on('message', (m: ChildMessage) => m.type === 'ready' && resolve(m.url));
  });
  const peakRss = () =>
    Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
  return { url, child, peakRss };
}

const run = (o: Options & { amount?: number }) => autocannon({ timeout: 30, ...o });

/** The victim stays within its own budget: a steady 15 pages a second on 4 connections. */
const victimRun = (url: string, key: string) =>
  run({
    url: `${url}/v1/patients?limit=25`,
    connections: 4,
    overallRate: 15,
    duration: DURATION,
    headers: { authorization: `Bearer ${key}` },
  });

const { admin, bench } = urls();
const keys = await prepare(bench, admin);
const heavy = heaviestQuery();
const app = await startApp(bench);
console.log(`heaviest allowed query: cost ${heavy.cost} of ${defaultLimits.graphqlMaxCost}`);

// Warm the path up, then let the victim's rate-limit window start afresh.
await run({
  url: `${app.url}/v1/patients?limit=25`,
  connections: 2,
  amount: 100,
  headers: { authorization: `Bearer ${keys.victim}` },
});
await new Promise((r) => setTimeout(r, defaultLimits.rateLimitWindowSeconds * 1000 + 500));

const unloaded = await victimRun(app.url, keys.victim);
const attack = run({
  url: `${app.url}/graphql`,
  method: 'POST',
  connections: ATTACKERS,
  duration: DURATION + 1,
  headers: { authorization: `Bearer ${keys.attacker}`, 'content-type': 'application/json' },
  body: JSON.stringify({ query: heavy.query }),
});
await new Promise((r) => setTimeout(r, 500));
const loaded = await victimRun(app.url, keys.victim);
const attackResult = await attack;

const ms = (v: number) => `${v.toFixed(1)} ms`;
const line = (name: string, r: Result) =>
  `${name.padEnd(22)} p50 ${ms(r.latency.p50).padStart(9)}  p99 ${ms(r.latency.p99).padStart(9)}  ${r.requests.average.toFixed(0).padStart(6)} req/s  non-2xx ${r.non2xx}`;
console.log(line('victim, unloaded', unloaded));
console.log(line('victim, under attack', loaded));
const statuses = attackResult.statusCodeStats as unknown as Record<string, { count: number }>;
console.log(
  `attacker: ${Object.entries(statuses)
    .map(([s, v]) => `${v.count} × ${s}`)
    .join(', ')} in ${DURATION + 1} s on ${ATTACKERS} connections`,
);
const ratio = loaded.latency.p99 / Math.max(unloaded.latency.p99, 0.1);
const rss = app.peakRss() / 2 ** 20;
console.log(
  `victim p99 loaded/unloaded: ${ratio.toFixed(2)} × (aim ≤ 3)   server peak RSS: ${rss.toFixed(0)} MB (aim < 400)`,
);
app.child.kill('SIGTERM');
process.exit(0);
