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
 *   5. Introspection without a key (issue 34): two anonymous clients, each from its own loopback
 *      address (so two budgets), loop the heaviest introspection document the limits let them
 *      send, each request a new text (a comment) so that none is answered from the cache, while
 *      the victim reads as in 3. Prints their answers, the server's CPU and the victim's p99
 *      beside its unloaded one. Aim: at most 2 × unloaded.
 *
 * Options: --duration=20 (seconds per phase) --attackers=64 --case=all|clinic|introspection
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon, { type Options, type Result } from 'autocannon';
import { execute, getIntrospectionQuery, parse, validate } from 'graphql';
import { createApiKey } from '../src/auth/keys.ts';
import { readScopes } from '../src/auth/scopes.ts';
import { openOrm } from '../src/db/orm.ts';
import { seedPatients } from '../src/demo/seed-patients.ts';
import { Clinic } from '../src/entities/index.ts';
import { ensureDatabase, migrate } from '../src/lib/database.ts';
import { defaultLimits } from '../src/lib/limits.ts';
import { costOf } from '../src/schema/cost.ts';
import { schemas } from '../src/schema/index.ts';
import { anonymousShape, introspectionShape } from '../src/server/introspection.ts';
import { createClinic } from '../src/services/clinics/clinics.ts';
import type { ChildMessage } from './child.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values: opts } = parseArgs({
  options: {
    duration: { type: 'string', default: '20' },
    attackers: { type: 'string', default: '64' },
    case: { type: 'string', default: 'all' },
  },
});
const DURATION = Number(opts.duration);
const ATTACKERS = Number(opts.attackers);
const CASES = opts.case === 'all' ? ['clinic', 'introspection'] : [opts.case];
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

/**
 * The largest answer an anonymous document may ask for (src/server/introspection.ts: one root, no
 * alias, `fields` and its kin one deep): GraphiQL's full introspection with every option, and the
 * same with every type reference described.
 */
function heaviestIntrospection(): { query: string; bytes: number } {
  const { publicSchema } = schemas();
  const full = getIntrospectionQuery({
    descriptions: true,
    schemaDescription: true,
    inputValueDeprecation: true,
    specifiedByUrl: true,
    directiveIsRepeatable: true,
  });
  const ref = (d: number): string =>
    d === 0 ? 'kind name description' : `kind name description specifiedByURL ofType { ${ref(d - 1)} }`;
  const candidates = [
    full,
    full.replace(/fragment TypeRef on __Type \{[\s\S]*$/, `fragment TypeRef on __Type { ${ref(8)} }`),
  ];
  let best = { query: '', bytes: 0 };
  for (const query of candidates) {
    const shape = introspectionShape(query, defaultLimits.graphqlMaxTokens);
    if (!anonymousShape(shape)) continue;
    const document = parse(query);
    if (validate(publicSchema, document).length) continue;
    const bytes = Buffer.byteLength(JSON.stringify(execute({ schema: publicSchema, document })));
    if (bytes > best.bytes) best = { query, bytes };
  }
  return best;
}

/** The issue's document: 30 aliased `__schema` roots, every type in full in each (10 MB before). */
function thirtyRoots(): string {
  const full = getIntrospectionQuery();
  const fullType = full.slice(full.indexOf('fragment FullType'));
  return `{ ${Array.from({ length: 30 }, (_, i) => `s${i}: __schema { types { ...FullType } }`).join(' ')} } ${fullType}`;
}

interface Loop {
  statuses: Map<number, number>;
  bytes: number;
}

/** POSTs `body()` without a key from `localAddress`, one request after another, until `end`. */
async function anonymousLoop(
  url: string,
  localAddress: string,
  body: () => string,
  end: number,
): Promise<Loop> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const loop: Loop = { statuses: new Map(), bytes: 0 };
  while (Date.now() < end) {
    const payload = body();
    const { status, bytes } = await new Promise<{ status: number; bytes: number }>((resolve, reject) => {
      const req = http.request(
        `${url}/graphql`,
        {
          method: 'POST',
          agent,
          localAddress,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
        },
        (res) => {
          let bytes = 0;
          res.on('data', (c: Buffer) => {
            bytes += c.length;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
    loop.statuses.set(status, (loop.statuses.get(status) ?? 0) + 1);
    if (status === 200) loop.bytes += bytes;
  }
  agent.destroy();
  return loop;
}

/** The server process's CPU time so far, in ms (utime + stime from /proc, 100 ticks a second). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
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

const idleCpu = cpuMs(app.child.pid ?? 0);
const idleStart = Date.now();
const unloaded = await victimRun(app.url, keys.victim);
const unloadedCpu = (cpuMs(app.child.pid ?? 0) - idleCpu) / (Date.now() - idleStart);
const ms = (v: number) => `${v.toFixed(1)} ms`;
const line = (name: string, r: Result) =>
  `${name.padEnd(30)} p50 ${ms(r.latency.p50).padStart(9)}  p99 ${ms(r.latency.p99).padStart(9)}  ${r.requests.average.toFixed(0).padStart(6)} req/s  non-2xx ${r.non2xx}`;
console.log(`${line('victim, unloaded', unloaded)}  server CPU ${(unloadedCpu * 100).toFixed(0)} %`);
const ratioTo = (r: Result) => r.latency.p99 / Math.max(unloaded.latency.p99, 0.1);

if (CASES.includes('clinic')) {
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
  console.log(line('victim, under attack', loaded));
  const statuses = attackResult.statusCodeStats as unknown as Record<string, { count: number }>;
  console.log(
    `attacker: ${Object.entries(statuses)
      .map(([s, v]) => `${v.count} × ${s}`)
      .join(', ')} in ${DURATION + 1} s on ${ATTACKERS} connections`,
  );
  console.log(`victim p99 loaded/unloaded: ${ratioTo(loaded).toFixed(2)} × (aim ≤ 3)`);
}

if (CASES.includes('introspection')) {
  const heaviest = heaviestIntrospection();
  const refused = await fetch(`${app.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: thirtyRoots() }),
  });
  console.log(
    `introspection without a key: the issue's 30 aliased __schema roots: ${refused.status} ${((await refused.json()) as any).errors?.[0]?.extensions?.limit}; heaviest allowed answer ${(heaviest.bytes / 1024).toFixed(0)} KB`,
  );
  let n = 0;
  // A new text each time: a comment makes another document, so the cache never answers.
  const body = () => JSON.stringify({ query: `# ${++n}\n${heaviest.query}` });
  const end = Date.now() + (DURATION + 1) * 1000;
  const cpuBefore = cpuMs(app.child.pid ?? 0);
  const started = Date.now();
  const loops = Promise.all(
    ['127.0.0.2', '127.0.0.3'].map((address) => anonymousLoop(app.url, address, body, end)),
  );
  await new Promise((r) => setTimeout(r, 500));
  const loaded = await victimRun(app.url, keys.victim);
  const results = await loops;
  const cpu = (cpuMs(app.child.pid ?? 0) - cpuBefore) / (Date.now() - started);
  console.log(line('victim, anonymous introspection', loaded));
  for (const [i, r] of results.entries())
    console.log(
      `anonymous client ${i + 1}: ${[...r.statuses].map(([s, c]) => `${c} × ${s}`).join(', ')}, ${(r.bytes / 2 ** 20).toFixed(1)} MiB answered in ${DURATION + 1} s`,
    );
  console.log(
    `victim p99 loaded/unloaded: ${ratioTo(loaded).toFixed(2)} × (aim ≤ 2)   server CPU meanwhile: ${(cpu * 100).toFixed(0)} % of a core (victim included)`,
  );
  // On a shared machine the idle figure drifts: measured again once the clients have stopped.
  console.log(line('victim, unloaded again', await victimRun(app.url, keys.victim)));
}

const rss = app.peakRss() / 2 ** 20;
console.log(`server peak RSS: ${rss.toFixed(0)} MB (aim < 400)`);
app.child.kill('SIGTERM');
process.exit(0);
