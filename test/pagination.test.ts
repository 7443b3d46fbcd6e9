import type { FilterQuery, FindOptions } from '@mikro-orm/postgresql';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  afterCondition,
  decodeCursor,
  encodeCursor,
  type KeysetSpec,
  orderBy,
  type Page,
  paginate,
  type SortDir,
} from '../src/db/pagination.ts';
import { Appointment, Branch, Clinic, Patient } from '../src/entities/index.ts';
import { AppError } from '../src/lib/errors.ts';
import { fixtures } from './fixtures.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * Keyset pages over a nullable sort key (appointments by cancelled_at, most of them NULL, many
 * ties), against PostgreSQL: the pages concatenate to the order computed here (NULLs last in
 * both directions, ties by id), and rows inserted or deleted between fetches neither repeat nor
 * skip the rows still to come.
 */
let app: TestApp;
let clinicId: number;
let branch: Branch;
let f: ReturnType<typeof fixtures>;

beforeAll(async () => {
  app = await startTestApp();
  clinicId = (await app.clinicWithKey('dental', ['patients:read'])).clinicId;
  f = fixtures(app.orm, clinicId);
  branch = (await f.catalog()).branch;
});

const T0 = Date.parse('2026-03-01T08:00:00.123Z');
const minute = (n: number) => new Date(T0 + n * 60_000);

/** A fresh EntityManager for every query, so nothing comes from an earlier identity map. */
function em() {
  const e = app.orm.em.fork();
  e.setFilterParams('tenant', { clinicId });
  return e;
}

/**
 * 30 appointments of a new patient: 10 never cancelled (NULL), ties of 3, 4 and 2 rows, and 11
 * distinct values, inserted in a shuffled order so ids do not follow cancelled_at.
 */
const VALUES: (number | null)[] = [
  ...Array<null>(10).fill(null),
  ...[5, 5, 5],
  ...[9, 9, 9, 9],
  ...[2, 2],
  ...[1, 3, 4, 6, 7, 8, 10, 11, 12, 13, 14],
];

async function patientWithAppointments(values: readonly (number | null)[] = VALUES): Promise<Patient> {
  const patient = await f.patient({ first: 'Dana', last: 'Keyset' });
  const shuffled = values.map((v, i) => ({ v, k: (i * 7919) % 31 })).sort((a, b) => a.k - b.k);
  await insert(
    patient,
    shuffled.map((x) => x.v),
  );
  return patient;
}

async function insert(patient: Patient, values: readonly (number | null)[]): Promise<Appointment[]> {
  const e = em();
  const clinic = e.getReference(Clinic, clinicId);
  const rows = values.map((v) =>
    e.create(Appointment, {
      clinic,
      patient: e.getReference(Patient, patient.id),
      branch: e.getReference(Branch, branch.id),
      provider: null,
      type: null,
      status: null,
      startAt: minute(0),
      endAt: minute(30),
      note: null,
      cancelledAt: v === null ? null : minute(v),
      createdAt: minute(0),
      updatedAt: minute(0),
    }),
  );
  await e.flush();
  return rows;
}

const spec = (dir: SortDir, idDir: SortDir): KeysetSpec<Appointment> => ({
  tag: 'cxl',
  sortBy: { prop: 'cancelledAt', kind: 'date', dir, nullable: true, get: (a) => a.cancelledAt ?? null },
  idDir,
  id: (a) => a.id,
});

/** The expected order: cancelled_at in `dir` with NULLs last, ties by id in `idDir`. */
function compare(dir: SortDir, idDir: SortDir) {
  return (a: Appointment, b: Appointment): number => {
    const va = a.cancelledAt?.getTime() ?? null;
    const vb = b.cancelledAt?.getTime() ?? null;
    if (va !== vb) {
      if (va === null) return 1;
      if (vb === null) return -1;
      return dir === 'asc' ? va - vb : vb - va;
    }
    return idDir === 'asc' ? a.id - b.id : b.id - a.id;
  };
}

async function allOf(patient: Patient, dir: SortDir, idDir: SortDir): Promise<Appointment[]> {
  return (await em().find(Appointment, { patient: patient.id })).sort(compare(dir, idDir));
}

function fetchPage(keyset: KeysetSpec<Appointment>, patient: Patient, limit: number, cursor: string | null) {
  return paginate(keyset, { limit, cursor }, ({ after, orderBy, take }) =>
    em().find(Appointment, { patient: patient.id, ...after } as FilterQuery<Appointment>, {
      orderBy: orderBy as FindOptions<Appointment>['orderBy'],
      limit: take,
    }),
  );
}

/** Every page, in order; `between` runs after each page that has a next one. */
async function walk(
  keyset: KeysetSpec<Appointment>,
  patient: Patient,
  limit: number,
  between?: (page: Page<Appointment>) => Promise<void>,
): Promise<Page<Appointment>[]> {
  const pages: Page<Appointment>[] = [];
  let cursor: string | null = null;
  do {
    const page = await fetchPage(keyset, patient, limit, cursor);
    pages.push(page);
    expect(page.items.length).toBeLessThanOrEqual(limit);
    cursor = page.nextCursor;
    if (cursor) {
      expect(page.items).toHaveLength(limit);
      await between?.(page);
    }
    expect(pages.length).toBeLessThan(100);
  } while (cursor);
  return pages;
}

const ids = (rows: readonly Appointment[]) => rows.map((r) => r.id);
const DIRS: [SortDir, SortDir][] = [
  ['asc', 'asc'],
  ['asc', 'desc'],
  ['desc', 'asc'],
  ['desc', 'desc'],
];

describe('keyset pages over a nullable sort key', () => {
  let patient: Patient;
  beforeAll(async () => {
    patient = await patientWithAppointments();
  });

  for (const [dir, idDir] of DIRS) {
    for (const limit of [1, 2, 3, 4, 7, 10, 29, 30, 31]) {
      it(`cancelled_at ${dir} nulls last, id ${idDir}, ${limit} a page: every row once, in order`, async () => {
        const expected = await allOf(patient, dir, idDir);
        expect(expected).toHaveLength(30);
        const pages = await walk(spec(dir, idDir), patient, limit);
        const seen = ids(pages.flatMap((p) => p.items));
        expect(seen).toEqual(ids(expected));
        expect(new Set(seen).size).toBe(30);
        expect(pages).toHaveLength(Math.max(1, Math.ceil(30 / limit)));
      });
    }
  }

  it('orders NULLs last in both directions, as PostgreSQL would not by default for desc', async () => {
    for (const dir of ['asc', 'desc'] as const) {
      const { items } = await fetchPage(spec(dir, 'asc'), patient, 30, null);
      expect(items.slice(0, 20).every((a) => a.cancelledAt !== null)).toBe(true);
      expect(items.slice(20).every((a) => a.cancelledAt === null)).toBe(true);
    }
  });
});

describe('rows inserted and deleted between fetches', () => {
  // Where the cursor stands when the rows change: on a cancelled row, or among the NULLs.
  const positions = [
    { at: 'a value', limit: 7, here: (a: Appointment) => a.cancelledAt !== null },
    { at: 'a NULL', limit: 4, here: (a: Appointment) => a.cancelledAt === null },
  ];
  for (const [dir, idDir] of DIRS) {
    for (const { at, limit, here } of positions) {
      it(`neither repeat nor skip the rest (${dir}, id ${idDir}, cursor on ${at})`, async () => {
        const patient = await patientWithAppointments();
        const cmp = compare(dir, idDir);
        let cursorRow: Appointment | undefined;
        let before: number[] = [];
        let mutated = false;
        const pages = await walk(spec(dir, idDir), patient, limit, async (page) => {
          const last = page.items[page.items.length - 1];
          if (mutated || !here(last)) return;
          mutated = true;
          cursorRow = last;
          const order = await allOf(patient, dir, idDir);
          const i = order.findIndex((a) => a.id === last.id);
          before = ids(order.slice(0, i + 1));
          const v = last.cancelledAt ? Math.round((last.cancelledAt.getTime() - T0) / 60_000) : null;
          // New rows: NULLs, ties with the cursor's value, values on either side of it.
          await insert(patient, [null, null, 0, 100, ...(v === null ? [] : [v, v, v - 0.5, v + 0.5])]);
          // Gone: the cursor's own row, the row right after it, and one before it.
          const gone = [order[i], order[i + 1], order[Math.max(0, i - 2)]].filter(Boolean);
          const e = em();
          await e.nativeDelete(Appointment, { id: { $in: ids(gone) } });
        });
        expect(mutated).toBe(true);
        const seen = ids(pages.flatMap((p) => p.items));
        expect(new Set(seen).size).toBe(seen.length);
        const k = before.length;
        expect(seen.slice(0, k)).toEqual(before);
        const rest = (await allOf(patient, dir, idDir)).filter((a) => cmp(a, cursorRow!) > 0);
        expect(seen.slice(k)).toEqual(ids(rest));
        expect(rest.length).toBeGreaterThan(0);
      });
    }
  }
});

describe('cursors', () => {
  const nullable = spec('desc', 'desc');
  const plain: KeysetSpec<Appointment> = {
    ...nullable,
    sortBy: { prop: 'cancelledAt', kind: 'date', dir: 'desc', get: (a) => a.cancelledAt ?? null },
  };
  const raw = (values: unknown[]) => Buffer.from(JSON.stringify(values)).toString('base64url');
  const row = (cancelledAt: Date | null, id: number) => ({ id, cancelledAt }) as Appointment;

  function refusal(fn: () => unknown, param = 'cursor'): AppError {
    let err: unknown;
    try {
      fn();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AppError);
    const app = err as AppError;
    expect(app.code).toBe('validation_failed');
    expect(app.status).toBe(422);
    expect(app.param).toBe(param);
    return app;
  }

  it('carry null for a NULL sort value, and decode it for a nullable key', () => {
    const c = encodeCursor(nullable, row(null, 17));
    expect(JSON.parse(Buffer.from(c, 'base64url').toString())).toEqual(['cxl', null, 17]);
    expect(decodeCursor(nullable, c)).toEqual([null, 17]);
    const d = new Date('2026-03-01T08:00:00.123Z');
    expect(decodeCursor(nullable, encodeCursor(nullable, row(d, 18)))).toEqual([d, 18]);
  });

  it('with a null sort value are a 422 on cursor for a key that is not nullable', async () => {
    const c = raw(['cxl', null, 17]);
    refusal(() => decodeCursor(plain, c));
    refusal(() => decodeCursor(plain, c, 'after'), 'after');
    let fetched = false;
    const err = await paginate(plain, { limit: 5, cursor: c }, async () => {
      fetched = true;
      return [];
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).status).toBe(422);
    expect((err as AppError).code).toBe('validation_failed');
    expect((err as AppError).param).toBe('cursor');
    expect(fetched).toBe(false);
    // An encoded null (a row whose value is missing) is refused the same way.
    refusal(() => decodeCursor(plain, encodeCursor(plain, row(null, 3))));
  });

  it('are still refused when edited, nullable key or not', () => {
    for (const s of [nullable, plain]) {
      for (const bad of [
        raw(['cxl', 'yesterday', 1]),
        raw(['cxl', 5, 1]),
        raw(['cxl', '2026-03-01T08:00:00Z', 1]),
        raw(['cxl', null]),
        raw(['cxl', 1]),
        raw(['cxl', null, -1]),
        raw(['cxl', null, 1.5]),
        raw(['cxl', null, '1']),
        raw(['other', null, 1]),
        raw(['cxl', null, null]),
        raw(['cxl', null, 1, 2]),
        raw({ 0: 'cxl' } as unknown as unknown[]),
        'not base64!',
        '',
      ]) {
        if (bad === '') expect(decodeCursor(s, bad)).toBeNull();
        else refusal(() => decodeCursor(s, bad));
      }
    }
    const numbers: KeysetSpec<{ id: number; n: number | null }> = {
      tag: 'n',
      sortBy: { prop: 'n', kind: 'number', dir: 'asc', nullable: true, get: (r) => r.n },
      idDir: 'asc',
      id: (r) => r.id,
    };
    expect(decodeCursor(numbers, raw(['n', null, 4]))).toEqual([null, 4]);
    expect(decodeCursor(numbers, raw(['n', 2.5, 4]))).toEqual([2.5, 4]);
    refusal(() => decodeCursor(numbers, raw(['n', '2', 4])));
  });
});

describe('conditions and order', () => {
  const d = new Date('2026-03-01T08:00:00.123Z');

  it('are what they always were for a key that is not nullable', () => {
    const s: KeysetSpec<{ id: number; at: Date }> = {
      tag: 't',
      sortBy: { prop: 'at', kind: 'date', dir: 'desc', get: (r) => r.at },
      idDir: 'asc',
      id: (r) => r.id,
    };
    expect(afterCondition(s, [d, 7])).toEqual({ $or: [{ at: { $lt: d } }, { at: d, id: { $gt: 7 } }] });
    expect(orderBy(s)).toEqual([{ at: 'desc' }, { id: 'asc' }]);
    const byId: KeysetSpec<{ id: number }> = { tag: 'i', idDir: 'desc', id: (r) => r.id };
    expect(afterCondition(byId, [7])).toEqual({ id: { $lt: 7 } });
    expect(orderBy(byId)).toEqual([{ id: 'desc' }]);
  });

  it('for a nullable key: NULLs last, and every NULL after any value', () => {
    const s = spec('desc', 'desc');
    expect(orderBy(s)).toEqual([{ cancelledAt: 'desc nulls last' }, { id: 'desc' }]);
    expect(orderBy(spec('asc', 'desc'))).toEqual([{ cancelledAt: 'asc nulls last' }, { id: 'desc' }]);
    expect(afterCondition(s, [d, 7])).toEqual({
      $or: [{ cancelledAt: { $lt: d } }, { cancelledAt: d, id: { $lt: 7 } }, { cancelledAt: null }],
    });
    expect(afterCondition(spec('asc', 'asc'), [null, 7])).toEqual({ cancelledAt: null, id: { $gt: 7 } });
  });
});
