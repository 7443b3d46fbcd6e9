import { execFile, execFileSync, spawnSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { standardSignatureHeader } from '../src/lib/standard-webhooks.ts';
import { signatureHeader } from '../src/webhooks/signing.ts';
import { fixtures } from './fixtures.ts';
import { startTestApp } from './helpers.ts';

/**
 * The SDK as an integrator gets it: `npm pack` of packages/sdk (its prepack builds dist), the
 * tarball's files, the dashboard example (examples/dashboard-client) compiled strictly against
 * the tarball's types with Apollo Client 4 and urql beside it, and the compiled example run on
 * Node 20 against a real app. test/sdk.test.ts holds what the SDK does; this, that it ships.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const sdkDir = path.join(root, 'packages/sdk');
const tmp = mkdtempSync(path.join(tmpdir(), 'cg-sdk-pack-'));
const consumer = path.join(tmp, 'consumer');
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A Node 20 on the machine (Debian's is): the SDK's oldest supported Node. */
const node20 = (() => {
  const found = spawnSync('which', ['-a', 'node'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
  return found.find((bin) =>
    spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout.trim().startsWith('v20.'),
  );
})();
if (!node20)
  console.warn('SDK on Node 20 skipped: no Node 20 among `which -a node` (apt-get install nodejs)');

let packed: { filename: string; files: { path: string }[] };
let compiled: { status: number | null; output: string };

beforeAll(() => {
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', tmp], {
    cwd: sdkDir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  [packed] = JSON.parse(out);
  // The consumer: the tarball installed as a dependency, the rest linked from the repository's
  // node_modules (the registry is not needed to prove the package).
  const modules = path.join(consumer, 'node_modules');
  mkdirSync(path.join(modules, '@clinic-gateway'), { recursive: true });
  execFileSync('tar', ['-xzf', path.join(tmp, packed.filename), '-C', path.join(modules, '@clinic-gateway')]);
  cpSync(path.join(modules, '@clinic-gateway/package'), path.join(modules, '@clinic-gateway/sdk'), {
    recursive: true,
  });
  rmSync(path.join(modules, '@clinic-gateway/package'), { recursive: true });
  const manifest = JSON.parse(readFileSync(path.join(sdkDir, 'package.json'), 'utf8'));
  const linked = [
    ...Object.keys(manifest.dependencies),
    ...Object.keys(manifest.peerDependencies),
    // What the example uses beside the SDK.
    '@apollo/client',
    '@urql/core',
    'rxjs',
    '@types/node',
    '@types/ws',
  ];
  for (const name of linked) {
    mkdirSync(path.dirname(path.join(modules, name)), { recursive: true });
    symlinkSync(path.join(root, 'node_modules', name), path.join(modules, name));
  }
  const example = path.join(root, 'examples/dashboard-client');
  cpSync(path.join(example, 'src'), path.join(consumer, 'src'), { recursive: true });
  cpSync(path.join(example, 'tsconfig.json'), path.join(consumer, 'tsconfig.json'));
  writeFileSync(path.join(consumer, 'package.json'), '{ "private": true, "type": "module" }\n');
  // Here, not in its test: the Node 20 runs below run what it emits.
  const tsc = spawnSync(
    process.execPath,
    [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', consumer],
    {
      encoding: 'utf8',
    },
  );
  compiled = { status: tsc.status, output: tsc.stdout + tsc.stderr };
}, 120_000);

describe('the SDK package', () => {
  it('packs the built JavaScript, its declarations, the manifest and the README, nothing else', () => {
    const sources = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory()
          ? sources(path.join(dir, e.name)).map((f) => `${e.name}/${f}`)
          : e.name.endsWith('.ts')
            ? [e.name]
            : [],
      );
    const built = sources(path.join(sdkDir, 'src')).flatMap((f) => [
      `dist/${f.replace(/\.ts$/, '.js')}`,
      `dist/${f.replace(/\.ts$/, '.d.ts')}`,
    ]);
    expect(packed.files.map((f) => f.path).sort()).toEqual(['README.md', 'package.json', ...built].sort());
  });

  it('its main entry reaches no Node built-in (a browser bundle of it builds); verifyWebhook is ./webhooks', () => {
    const dist = path.join(consumer, 'node_modules/@clinic-gateway/sdk/dist');
    const reached = new Set<string>();
    const builtins: string[] = [];
    const visit = (file: string) => {
      if (reached.has(file)) return;
      reached.add(file);
      const code = readFileSync(file, 'utf8');
      for (const [, spec] of code.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)) {
        if (spec.startsWith('.')) visit(path.resolve(path.dirname(file), spec));
        else if (isBuiltin(spec)) builtins.push(`${path.relative(dist, file)}: ${spec}`);
      }
    };
    visit(path.join(dist, 'index.js'));
    expect(reached.size).toBeGreaterThan(3);
    expect(builtins).toEqual([]);
    expect([...reached].map((f) => path.basename(f))).not.toContain('webhooks.js');
    const manifest = JSON.parse(readFileSync(path.join(dist, '../package.json'), 'utf8'));
    expect(manifest.exports['./webhooks'].default).toBe('./dist/webhooks.js');
  });

  it('the example compiles strictly against the tarball: exports, declarations, Apollo Client 4 and urql', () => {
    expect(compiled.output).toBe('');
    expect(compiled.status).toBe(0);
  });

  it.skipIf(!node20)(
    'runs on Node 20: the compiled example against a real app',
    async () => {
      const app = await startTestApp();
      const c = await app.clinicWithKey('dental', [
        'patients:read',
        'patients:write',
        'appointments:read',
        'appointments:write',
        'catalog:read',
        'catalog:write',
        'webhooks:manage',
      ]);
      const cat = await fixtures(app.orm, c.clinicId).catalog();
      const p = await app.post('/v1/patients', { first_name: 'Dana', last_name: 'Cohen' }, c.key);
      expect(p.status, JSON.stringify(p.body)).toBe(201);
      const week = [1, 2, 3, 4, 5].map((weekday) => ({
        branch_id: `br_${cat.branch.id}`,
        weekday,
        start: '09:00',
        end: '17:00',
      }));
      const h = await app.send(
        'PUT',
        `/v1/catalog/providers/prv_${cat.provider.id}/working_hours`,
        { data: week },
        c.key,
      );
      expect(h.status, JSON.stringify(h.body)).toBe(200);
      // Not spawnSync: the app answering it runs in this process.
      const run = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
        execFile(
          node20!,
          [path.join(consumer, 'dist/main.js')],
          {
            encoding: 'utf8',
            timeout: 20_000,
            env: { PATH: process.env.PATH, API_KEY: c.key, BASE_URL: app.url, FROM: '2026-11-01T10:00:00Z' },
          },
          (err, stdout, stderr) => resolve({ status: err ? (err.code as number | null) : 0, stdout, stderr }),
        );
      });
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      const lines = run.stdout.trim().split('\n');
      expect(lines[0]).toBe('1 patient(s):');
      expect(lines).toContain(`  ${p.body.data.id} Dana Cohen`);
      expect(lines).toContainEqual(
        expect.stringMatching(/^Booked appt_\d+ for pat_\d+ at 2026-11-02T09:00:00\.000Z\.$/),
      );
      const booked = /^Booked (appt_\d+)/.exec(lines.find((l) => l.startsWith('Booked')) ?? '')?.[1];
      expect(lines.at(-1)).toMatch(new RegExp(`^Event evt_\\d+ APPOINTMENT_CREATED at .*: ${booked}$`));
    },
    30_000,
  );

  it.skipIf(!node20)(
    'verifyWebhook on Node 20: what the service signs, with a standard and an older secret',
    () => {
      const body =
        '{"id":"evt_7","type":"patient.created","created_at":"2026-11-01T10:00:00.000Z","data":{}}';
      const standard = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
      // A secret made before Standard Webhooks: base64url, no standard signature.
      const older = `whsec_${Buffer.alloc(32, 250).toString('base64url')}`;
      const another = `whsec_${Buffer.alloc(32, 4).toString('base64')}`;
      const timestamp = 1_793_527_200;
      const headersOf = (secret: string) => ({
        'x-service-signature': signatureHeader(secret, body),
        'webhook-id': 'evt_7',
        'webhook-timestamp': String(timestamp),
        ...(standardSignatureHeader([secret], 'evt_7', timestamp, body)
          ? { 'webhook-signature': standardSignatureHeader([secret], 'evt_7', timestamp, body)! }
          : {}),
      });
      const cases = [
        { secret: standard, headers: headersOf(standard) },
        { secret: standard, headers: headersOf(standard), scheme: 'service' },
        { secret: older, headers: headersOf(older) },
        { secret: older, headers: headersOf(older), scheme: 'standard' },
        { secret: standard, headers: headersOf(another) },
      ];
      const script = `
      import { verifyWebhook } from '@clinic-gateway/sdk/webhooks';
      const { body, now, cases } = JSON.parse(process.argv[2]);
      console.log(JSON.stringify(cases.map((c) => {
        try { return verifyWebhook({ body, now, ...c }).id; } catch (e) { return e.name + ': ' + e.message; }
      })));`;
      writeFileSync(path.join(consumer, 'verify.mjs'), script);
      const run = spawnSync(
        node20!,
        [path.join(consumer, 'verify.mjs'), JSON.stringify({ body, now: timestamp * 1000, cases })],
        { encoding: 'utf8' },
      );
      expect(run.stderr).toBe('');
      expect(JSON.parse(run.stdout)).toEqual([
        'evt_7',
        'evt_7',
        'evt_7',
        expect.stringContaining(
          'WebhookVerificationError: The webhook did not verify: the secret is not in the standard form',
        ),
        expect.stringContaining(
          'WebhookVerificationError: The webhook did not verify: no webhook-signature entry matches',
        ),
      ]);
    },
  );
});
