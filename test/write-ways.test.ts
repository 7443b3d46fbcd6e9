import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';

/**
 * One way to write (issue 36): a transaction is opened by the unit of work of a clinic's writes
 * (src/services/unit-of-work.ts, clinicWrite) or by the system write (src/db/system-write.ts), and
 * an EntityManager is flushed inside one of them, never on its own. The exceptions say why.
 */
const TRANSACTIONS_ELSEWHERE: Record<string, string> = {
  'src/lib/database.ts': "the migrations' own transaction, holding their lock",
  'src/demo/seed-demo.ts': 'the demo seed loads its clinics whole or not at all',
  'src/demo/seed-patients.ts': "the demo seed's batches, inside its load",
};
/** Files whose bare `em.flush()` runs inside a transaction their caller holds. */
const FLUSHED_IN_CALLERS: Record<string, string> = {
  'src/services/chat/template-sync.ts': 'writeTemplates refuses to run outside a transaction',
};
const THE_WAYS = ['src/services/unit-of-work.ts', 'src/db/system-write.ts'];

const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );

const code = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line))
    .join('\n');

it('opens transactions only through the unit of work or the system write', () => {
  const opening = sources('src').filter((f) => /\.transactional\(|\.begin\(\)/.test(code(f)));
  const stray = opening.filter((f) => !THE_WAYS.includes(f) && !(f in TRANSACTIONS_ELSEWHERE));
  expect(stray, 'write through clinicWrite or systemWrite, or say here why not').toEqual([]);
});

it('flushes no bare EntityManager outside a write (a write flushes its own: w.em, change.em, tx)', () => {
  const bare = sources('src').filter(
    (f) =>
      /(?<![.\w])em\.flush\(\)/.test(code(f)) && !f.startsWith('src/demo/') && !(f in FLUSHED_IN_CALLERS),
  );
  expect(bare, 'write through clinicWrite or systemWrite').toEqual([]);
});
