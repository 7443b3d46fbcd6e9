import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, describe, expect, inject, it } from 'vitest';

/**
 * docs/adding-a-resource.md, kept honest: the example field (Appointment.room, text of at
 * most 40 characters, nullable, written on create and update) added on a scratch copy of this
 * tree with the four hand edits the guide lists passes the guards; each single edit left out, or
 * the one mistake made, fails the test the guide names. Each case runs the named test file in a
 * vitest of its own on the copy (on this run's PostgreSQL).
 */
const root = path.resolve(import.meta.dirname, '..');
const scratch = mkdtempSync(path.join(os.tmpdir(), 'cg-field-drill-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

type Edit = 'entity' | 'migration' | 'definition' | 'value';

/** The four hand edits, each as the guide shows it. */
const EDITS: Record<Edit, [file: string, anchor: string, replacement: string][]> = {
  entity: [
    [
      'src/entities/clinical.ts',
      '    note: p.text().nullable(),\n    cancelledAt: p.datetime().nullable(),\n    cancellationReason: p.text().nullable(),\n    ...versionedTimestamps(),\n  },\n});\nexport class Appointment ',
      '    note: p.text().nullable(),\n    room: p.string().length(40).nullable(),\n    cancelledAt: p.datetime().nullable(),\n    cancellationReason: p.text().nullable(),\n    ...versionedTimestamps(),\n  },\n});\nexport class Appointment ',
    ],
  ],
  migration: [
    [
      'migrations/index.ts',
      '\n];',
      "\n  { name: 'Migration20991231000000AppointmentRoom', class: Migration20991231000000AppointmentRoom },\n];",
    ],
    [
      'migrations/index.ts',
      "import type { MigrationObject } from '@mikro-orm/core';",
      "import type { MigrationObject } from '@mikro-orm/core';\nimport { Migration20991231000000AppointmentRoom } from './Migration20991231000000AppointmentRoom.ts';",
    ],
  ],
  definition: [
    [
      'src/services/appointments/appointment.resource.ts',
      "    cancelled_at: f.time('cancelledAt', {",
      "    room: f.column('room', 'String', {\n      nullable: true,\n      description: 'The room; null when none.',\n      write: { on: 'both', input: text(40), description: 'The room, up to 40 characters.' },\n    }),\n    cancelled_at: f.time('cancelledAt', {",
    ],
  ],
  value: [
    [
      'test/full-fixtures.ts',
      "    note: 'Bring the vaccination card',\n",
      "    note: 'Bring the vaccination card',\n    room: 'Surgery 2',\n",
    ],
  ],
};

const MIGRATION = `import { Migration } from '@mikro-orm/migrations';

export class Migration20991231000000AppointmentRoom extends Migration {
  override up(): void {
    this.addSql('alter table "appointment" add column "room" varchar(40) null');
  }
}
`;

/** A fresh copy of the tree (tracked and new files, as they stand), with node_modules linked. */
function copyOfTree(name: string): string {
  const dir = path.join(scratch, name);
  const files = spawnSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], {
    cwd: root,
    encoding: 'utf8',
  })
    .stdout.split('\0')
    .filter(Boolean);
  for (const f of files) {
    mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    try {
      cpSync(path.join(root, f), path.join(dir, f));
    } catch {
      // Deleted in the work tree but still tracked: not part of the tree as it stands.
    }
  }
  symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
  return dir;
}

function applyEdits(dir: string, edits: Edit[], mistakes: [file: string, from: string, to: string][] = []) {
  for (const edit of edits)
    for (const [file, anchor, replacement] of EDITS[edit]) {
      const text = readFileSync(path.join(dir, file), 'utf8');
      const at = edit === 'migration' && anchor === '\n];' ? text.lastIndexOf(anchor) : text.indexOf(anchor);
      expect(
        at,
        `the drill's anchor for ${edit} in ${file} (update test/field-drill.test.ts)`,
      ).toBeGreaterThan(-1);
      writeFileSync(path.join(dir, file), text.slice(0, at) + replacement + text.slice(at + anchor.length));
    }
  if (edits.includes('migration'))
    writeFileSync(path.join(dir, 'migrations/Migration20991231000000AppointmentRoom.ts'), MIGRATION);
  for (const [file, from, to] of mistakes) {
    const text = readFileSync(path.join(dir, file), 'utf8');
    expect(text).toContain(from);
    writeFileSync(path.join(dir, file), text.replace(from, to));
  }
}

/** Runs test files on the copy; answers whether they passed and what they printed. */
function runTests(dir: string, files: string[]): { passed: boolean; out: string } {
  const r = spawnSync(path.join(root, 'node_modules/.bin/vitest'), ['run', ...files], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, DATABASE_URL: inject('adminUrl'), CI: 'true', FORCE_COLOR: '0' },
    timeout: 240_000,
  });
  // Without colours: the cases match the report's text (FAIL lines name the failing file).
  const out = stripVTControlCharacters(`${r.stdout}\n${r.stderr}`);
  return { passed: r.status === 0, out };
}

const ALL: Edit[] = ['entity', 'migration', 'definition', 'value'];
const without = (e: Edit) => ALL.filter((x) => x !== e);
const definitionFile = 'src/services/appointments/appointment.resource.ts';

describe('adding Appointment.room as docs/adding-a-resource.md says', { timeout: 300_000 }, () => {
  it('the four hand edits: the guards pass', () => {
    const dir = copyOfTree('all');
    applyEdits(dir, ALL);
    const r = runTests(dir, [
      'test/write-agreement.test.ts',
      'test/schema-agreement.test.ts',
      'test/resource-parity.test.ts',
      'test/write-limits.test.ts',
    ]);
    expect(r.passed, r.out).toBe(true);
  });

  // Cases that leave the same edits out share a copy and one vitest run (CI time): the two
  // mistakes are made on one copy whose test value is also left out, and each named test file
  // must fail with its own message.
  const mistakes: [string, string, string][] = [
    [definitionFile, "write: { on: 'both', input: text(40)", "write: { on: 'create', input: text(40)"],
    [definitionFile, 'input: text(40)', 'input: text(400)'],
  ];
  const runs: Record<string, { edits: Edit[]; tests: string[]; mistakes?: typeof mistakes }> = {
    'no-migration': { edits: without('migration'), tests: ['test/schema-agreement.test.ts'] },
    'no-definition': { edits: without('definition'), tests: ['test/write-agreement.test.ts'] },
    'no-value-and-mistakes': {
      edits: without('value'),
      tests: ['test/resource-parity.test.ts', 'test/write-agreement.test.ts', 'test/write-limits.test.ts'],
      mistakes,
    },
  };
  const done = new Map<string, { passed: boolean; out: string }>();
  const outcomeOf = (run: string) => {
    let r = done.get(run);
    if (!r) {
      const { edits, tests, mistakes: made } = runs[run] as (typeof runs)[string];
      const dir = copyOfTree(run);
      applyEdits(dir, edits, made);
      r = runTests(dir, tests);
      done.set(run, r);
    }
    return r;
  };
  const cases: [string, string, string, RegExp][] = [
    [
      'no migration',
      'no-migration',
      'test/schema-agreement.test.ts',
      /alter table \W*appointment\W* add \W*room/,
    ],
    [
      'no definition line',
      'no-definition',
      'test/write-agreement.test.ts',
      /Appointment\.room is not in the definition of Appointment/,
    ],
    ['no test value', 'no-value-and-mistakes', 'test/resource-parity.test.ts', /Appointment[^\n]*\.room/],
    [
      'written on create only by accident',
      'no-value-and-mistakes',
      'test/write-agreement.test.ts',
      /room is written on create only/,
    ],
    [
      'an input longer than its column',
      'no-value-and-mistakes',
      'test/write-limits.test.ts',
      /max 400, and its column appointment\.room holds 40/,
    ],
  ];
  for (const [name, run, test, says] of cases)
    it(`${name}: ${test} fails, saying so`, () => {
      const r = outcomeOf(run);
      expect(r.passed, r.out).toBe(false);
      expect(r.out, `${test} failed`).toMatch(new RegExp(`FAIL +${test.replace(/[.]/g, '\\.')}`));
      expect(r.out).toMatch(says);
    });
});
