import { beforeAll, describe, expect, it } from 'vitest';
import { Branch } from '../src/entities/index.ts';
import { camelOf, renameKeys } from '../src/lib/names.ts';
import { fixtures } from './fixtures.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * A provider's working hours (issue 16, availability): GET and PUT
 * /v1/catalog/providers/{id}/working_hours and GraphQL's workingHours / setWorkingHours. A PUT
 * replaces the whole week; each refusal names its field; other clinics' providers and branches
 * are unknown; the database backs the no-overlap rule.
 */
let app: TestApp;
let clinicId: number;
let write: string;
let read: string;
let patientsOnly: string;
let ids: { provider: string; branch: string; branch2: string };
let foreign: { provider: string; branch: string; key: string };

beforeAll(async () => {
  app = await startTestApp();
  const c = await app.clinicWithKey('dental', ['catalog:read', 'catalog:write'], 'A', {
    timezone: 'Europe/Berlin',
  });
  clinicId = c.clinicId;
  write = c.key;
  read = await app.key(clinicId, ['catalog:read']);
  patientsOnly = await app.key(clinicId, ['patients:read']);
  const fx = fixtures(app.orm, clinicId);
  const cat = await fx.catalog();
  const branch2 = fx.em.create(Branch, {
    clinic: clinicId,
    name: 'Second',
    phone: null,
    address: null,
    color: null,
  });
  await fx.em.flush();
  ids = { provider: `prv_${cat.provider.id}`, branch: `br_${cat.branch.id}`, branch2: `br_${branch2.id}` };
  const o = await app.clinicWithKey('dental', ['catalog:read', 'catalog:write'], 'B');
  const ocat = await fixtures(app.orm, o.clinicId).catalog();
  foreign = { provider: `prv_${ocat.provider.id}`, branch: `br_${ocat.branch.id}`, key: o.key };
});

const path = (provider = ids.provider) => `/v1/catalog/providers/${provider}/working_hours`;
const put = (data: unknown, key = write, provider = ids.provider, headers: Record<string, string> = {}) =>
  app.send('PUT', path(provider), { data }, key, headers);
const get = async (key = read, provider = ids.provider) => app.get(path(provider), key);
/** An interval; at collection time (the refusals' table) its branch is the placeholder BRANCH. */
const iv = (weekday: number, start: string, end: string, branch?: string) => ({
  branch_id: branch ?? ids?.branch ?? 'BRANCH',
  weekday,
  start,
  end,
});

const week = () => [
  iv(1, '14:00', '18:00'),
  iv(1, '09:00', '13:00'),
  iv(6, '09:00', '12:30', ids.branch2),
  iv(3, '08:05', '24:00'),
];
/** `n` valid intervals: one an hour on each weekday in turn. */
const many = (n: number) =>
  Array.from({ length: n }, (_, i) => {
    const h = String(Math.floor(i / 7)).padStart(2, '0');
    return iv((i % 7) + 1, `${h}:00`, `${h}:30`);
  });
const sorted = () => [week()[1], week()[0], week()[3], week()[2]];

describe('PUT and GET', () => {
  it('a provider without hours has an empty week', async () => {
    const r = await get();
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ data: [] });
  });

  it('PUT replaces the week and answers it as GET does, by weekday then start', async () => {
    const r = await put(week());
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual({ data: sorted() });
    // The week's version is its provider's updated_at: the ETag of the PUT and of the GET.
    const etag = r.headers.get('etag');
    expect(etag).toMatch(/^"\d+"$/);
    const got = await get();
    expect(got.body).toEqual(r.body);
    expect(got.headers.get('etag')).toBe(etag);
    // The same body again changes nothing, not even the version.
    const again = await put(week());
    expect(again.body).toEqual(r.body);
    expect(again.headers.get('etag')).toBe(etag);

    const replaced = await put([iv(2, '10:00', '11:00')]);
    expect(replaced.body).toEqual({ data: [iv(2, '10:00', '11:00')] });
    expect((await get()).body).toEqual(replaced.body);
    const [{ n }] = await app.orm.em
      .fork()
      .getConnection()
      .execute<{ n: string }[]>('select count(*) as n from working_hours where clinic_id = ?', [clinicId]);
    expect(Number(n)).toBe(1);
  });

  it('an empty list clears the week; back-to-back intervals are no overlap', async () => {
    expect((await put([])).body).toEqual({ data: [] });
    expect((await get()).body).toEqual({ data: [] });
    const touching = [iv(1, '09:00', '13:00'), iv(1, '13:00', '14:00', ids.branch2)];
    expect((await put(touching)).status).toBe(200);
  });

  it('reads need catalog:read, writes catalog:write', async () => {
    const r = await put(week(), read);
    expect(r.status).toBe(403);
    expect(r.body.error.required_scopes).toEqual(['catalog:write']);
    const g = await get(patientsOnly);
    expect(g.status).toBe(403);
    expect(g.body.error.required_scopes).toEqual(['catalog:read']);
  });

  it("another clinic's provider is a 404 for GET and PUT, and its week is untouched", async () => {
    await put([iv(4, '09:00', '10:00', foreign.branch)], foreign.key, foreign.provider);
    const before = (await get(foreign.key, foreign.provider)).body;
    expect(before.data).toHaveLength(1);
    expect((await get(read, foreign.provider)).status).toBe(404);
    const r = await put(week(), write, foreign.provider);
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('not_found');
    for (const bad of ['prv_99999999', 'br_1', 'x']) expect((await get(read, bad)).status).toBe(404);
    expect((await get(foreign.key, foreign.provider)).body).toEqual(before);
  });

  it('a PUT is repeatable by itself (Idempotency-Key is a 422); If-Match keeps two dashboards from overwriting each other', async () => {
    const k = await put(week(), write, ids.provider, { 'idempotency-key': 'k1' });
    expect(k.status).toBe(422);
    expect(k.body.error.param).toBe('Idempotency-Key');
    const read1 = await get();
    const etag = read1.headers.get('etag') as string;
    // The first dashboard saves a changed week with the version it read: it passes.
    const first = await put([iv(3, '08:00', '12:00')], write, ids.provider, { 'if-match': etag });
    expect(first.status).toBe(200);
    expect(first.headers.get('etag')).not.toBe(etag);
    // The second, with the same (now stale) version: 412, and the first one's week stands.
    const second = await put([iv(4, '08:00', '12:00')], write, ids.provider, { 'if-match': etag });
    expect(second.status).toBe(412);
    expect(second.body.error).toMatchObject({ code: 'precondition_failed', param: 'If-Match' });
    expect((await get()).body).toEqual(first.body);
  });
});

describe('refusals name their field and change nothing', () => {
  const ok = iv(1, '09:00', '13:00');
  const cases: [string, unknown, string][] = [
    ['no data', undefined, 'data'],
    ['data not a list', { weekday: 1 }, 'data'],
    ['an unknown field', [{ ...ok, colour: 'red' }], 'data[0].colour'],
    ['a missing field', [{ weekday: 1, start: '09:00', end: '10:00' }], 'data[0].branch_id'],
    ['weekday 0', [ok, { ...ok, weekday: 0 }], 'data[1].weekday'],
    ['weekday 8', [{ ...ok, weekday: 8 }], 'data[0].weekday'],
    ['weekday 1.5', [{ ...ok, weekday: 1.5 }], 'data[0].weekday'],
    ['weekday as text', [{ ...ok, weekday: '1' }], 'data[0].weekday'],
    ['a time without its zero', [{ ...ok, start: '9:00' }], 'data[0].start'],
    ['25:00', [{ ...ok, end: '25:00' }], 'data[0].end'],
    ['minutes past 59', [{ ...ok, start: '09:60' }], 'data[0].start'],
    ['off the 5-minute grid', [{ ...ok, start: '09:03' }], 'data[0].start'],
    ['a start of 24:00', [{ ...ok, start: '24:00', end: '24:00' }], 'data[0].start'],
    ['end before start', [{ ...ok, start: '13:00', end: '09:00' }], 'data[0].end'],
    ['end equal to start', [{ ...ok, end: '09:00' }], 'data[0].end'],
    ['a malformed branch id', [ok, { ...ok, weekday: 2, branch_id: 'pat_1' }], 'data[1].branch_id'],
    ['an unknown branch', [ok, { ...ok, weekday: 2, branch_id: 'br_99999999' }], 'data[1].branch_id'],
    ["another clinic's branch", [{ ...ok, branch_id: 'FOREIGN' }], 'data[0].branch_id'],
    [
      'an overlap within a day, at another branch too',
      [ok, iv(2, '09:00', '10:00'), iv(1, '12:55', '14:00', 'BRANCH2')],
      'data[2].start',
    ],
    ['an interval inside another', [iv(5, '08:00', '18:00'), iv(5, '12:00', '13:00')], 'data[1].start'],
    ['more than 50 intervals', many(51), 'data'],
  ];

  it.each(cases)('%s', async (_name, data, param) => {
    const before = (await get()).body;
    const body = JSON.parse(
      JSON.stringify(data === undefined ? {} : { data })
        .replaceAll('FOREIGN', foreign.branch)
        .replaceAll('BRANCH2', ids.branch2)
        .replaceAll('BRANCH', ids.branch),
    );
    const r = await app.send('PUT', path(), body, write);
    expect(r.status, JSON.stringify(r.body)).toBe(422);
    expect(r.body.error).toMatchObject({ code: 'validation_failed', param });
    expect((await get()).body).toEqual(before);
  });

  it('the overlap message names the interval in the way', async () => {
    const r = await put([iv(1, '09:00', '13:00'), iv(1, '12:00', '14:00', ids.branch2)]);
    expect(r.body.error.message).toContain('overlaps data[0] (Mon 09:00–13:00)');
  });

  it('50 intervals are fine', async () => {
    const r = await put(many(50));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data).toHaveLength(50);
  });

  it('the database refuses overlapping rows by itself (working_hours_no_overlap)', async () => {
    await put([iv(1, '09:00', '13:00')]);
    const [row] = await app.orm.em
      .fork()
      .getConnection()
      .execute<{ provider_id: number; branch_id: number }[]>(
        'select provider_id, branch_id from working_hours where clinic_id = ?',
        [clinicId],
      );
    await expect(
      app.orm.em
        .fork()
        .getConnection()
        .execute(
          'insert into working_hours (clinic_id, provider_id, branch_id, weekday, start_minute, end_minute) values (?, ?, ?, 1, 720, 800)',
          [clinicId, row.provider_id, row.branch_id],
        ),
    ).rejects.toThrow(/working_hours_no_overlap/);
    await expect(
      app.orm.em
        .fork()
        .getConnection()
        .execute(
          'insert into working_hours (clinic_id, provider_id, branch_id, weekday, start_minute, end_minute) values (?, ?, ?, 2, 600, 1441)',
          [clinicId, row.provider_id, row.branch_id],
        ),
    ).rejects.toThrow(/working_hours_minutes_check/);
  });
});

describe('GraphQL', () => {
  const setHours = `mutation($input: SetWorkingHoursInput!) {
    setWorkingHours(input: $input) { workingIntervals { branchId weekday start end } } }`;
  /** The week as the input names its fields. */
  const asInput = (data: unknown[]) => renameKeys(data, camelOf);

  it('setWorkingHours answers the week; workingHours reads it, the same JSON as REST in GraphQL names', async () => {
    const r = await app.gql(setHours, { input: { id: ids.provider, data: asInput(week()) } }, write);
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data.setWorkingHours.workingIntervals).toEqual(asInput(sorted()));
    const q = await app.gql(
      'query($p: ID!) { workingHours(providerId: $p) { branchId weekday start end } }',
      { p: ids.provider },
      read,
    );
    expect(q.body.errors).toBeUndefined();
    expect(q.body.data.workingHours).toEqual(asInput((await get()).body.data));
  });

  it('refusals carry code and param; an unknown provider is not_found; scopes hold', async () => {
    const bad = await app.gql(
      setHours,
      { input: { id: ids.provider, data: asInput([iv(1, '09:00', '13:00'), iv(1, '10:00', '11:00')]) } },
      write,
    );
    expect(bad.body.errors[0].extensions).toMatchObject({
      code: 'validation_failed',
      param: 'input.data[1].start',
    });
    const foreignProvider = await app.gql(
      'query($p: ID!) { workingHours(providerId: $p) { start } }',
      { p: foreign.provider },
      read,
    );
    expect(foreignProvider.body.data.workingHours).toBeNull();
    expect(foreignProvider.body.errors[0].extensions.code).toBe('not_found');
    const forbidden = await app.gql(setHours, { input: { id: ids.provider, data: [] } }, read);
    expect(forbidden.body.errors[0].extensions.code).toBe('forbidden');
  });
});
