import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Appointment, AppointmentType, Branch, type Patient, Provider } from '../src/entities/index.ts';
import { AvailableSlot, MAX_SLOTS } from '../src/services/availability/availability.ts';
import { fixtures } from './fixtures.ts';
import { graphqlOf } from './graphql-form.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * GET /v1/availability and GraphQL's availability (issue 16): slots from working hours (set
 * through the API) less active bookings, in the clinic's zone (Europe/Berlin here, so daylight
 * saving changes on 2026-03-29 and 2026-10-25), with the injected clock as now.
 */
let app: TestApp;
let clinicId: number;
let read: string;
let write: string;
let fx: ReturnType<typeof fixtures>;
let patient: Patient;
const ent: { branch?: Branch; branch2?: Branch; p1?: Provider; p2?: Provider; p3?: Provider } = {};
const ids = { branch: '', branch2: '', p1: '', p2: '', p3: '', t30: '', t60: '', tDisabled: '' };
let foreign: { branch: string; provider: string; type: string };

beforeAll(async () => {
  app = await startTestApp();
  const c = await app.clinicWithKey('dental', ['appointments:read', 'catalog:read'], 'Berlin', {
    timezone: 'Europe/Berlin',
  });
  clinicId = c.clinicId;
  read = c.key;
  write = await app.key(clinicId, ['catalog:write', 'catalog:read']);
  fx = fixtures(app.orm, clinicId);
  const cat = await fx.catalog();
  const em = fx.em;
  ent.branch = cat.branch;
  ent.branch2 = em.create(Branch, {
    clinic: clinicId,
    name: 'Second',
    phone: null,
    address: null,
    color: null,
  });
  ent.p1 = cat.provider;
  ent.p2 = em.create(Provider, { clinic: clinicId, name: 'Dr. Two', type: 'dentist', color: null });
  ent.p3 = em.create(Provider, { clinic: clinicId, name: 'Dr. Night', type: 'dentist', color: null });
  const t60 = em.create(AppointmentType, {
    clinic: clinicId,
    name: 'Long',
    durationMinutes: 60,
    color: null,
  });
  const off = em.create(AppointmentType, { clinic: clinicId, name: 'Old', durationMinutes: 30, color: null });
  await em.flush();
  off.disabledAt = new Date('2026-01-01T00:00:00Z');
  await em.flush();
  patient = await fx.patient({ first: 'Dana', last: 'Cohen' });
  Object.assign(ids, {
    branch: `br_${cat.branch.id}`,
    branch2: `br_${ent.branch2.id}`,
    p1: `prv_${ent.p1.id}`,
    p2: `prv_${ent.p2.id}`,
    p3: `prv_${ent.p3.id}`,
    t30: `apt_${cat.type.id}`,
    t60: `apt_${t60.id}`,
    tDisabled: `apt_${off.id}`,
  });
  const hours = async (provider: string, data: unknown[]) => {
    const r = await app.send('PUT', `/v1/catalog/providers/${provider}/working_hours`, { data }, write);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  };
  // Mondays: p1 09:00–12:00 and, after lunch, 13:00–15:00 at the main branch; p2 09:00–10:00 at the second.
  await hours(ids.p1, [
    { branch_id: ids.branch, weekday: 1, start: '09:00', end: '12:00' },
    { branch_id: ids.branch, weekday: 1, start: '13:00', end: '15:00' },
  ]);
  await hours(ids.p2, [{ branch_id: ids.branch2, weekday: 1, start: '09:00', end: '10:00' }]);
  // Sundays, across the night the clocks change: p3.
  await hours(ids.p3, [
    { branch_id: ids.branch, weekday: 7, start: '01:00', end: '04:00' },
    { branch_id: ids.branch, weekday: 7, start: '09:00', end: '10:00' },
  ]);
  const o = await app.clinicWithKey('dental', ['appointments:read'], 'Other');
  const ocat = await fixtures(app.orm, o.clinicId).catalog();
  foreign = {
    branch: `br_${ocat.branch.id}`,
    provider: `prv_${ocat.provider.id}`,
    type: `apt_${ocat.type.id}`,
  };
});

beforeEach(async () => {
  app.clock.set('2026-11-01T10:00:00Z');
  await fx.em.getConnection().execute('delete from appointment where clinic_id = ?', [clinicId]);
});

const MONDAY = '2026-12-07';

async function slots(query: Record<string, string>, key = read) {
  const r = await app.get(`/v1/availability?${new URLSearchParams(query)}`, key);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data as { start: string; end: string; provider_id: string; branch_id: string }[];
}

const monday = (extra: Record<string, string> = {}) =>
  slots({ appointment_type_id: ids.t60, from: MONDAY, to: '2026-12-08', ...extra });

const starts = (list: { start: string }[]) => list.map((s) => s.start);

/** Berlin in December is UTC+01:00: local 09:00 is 08:00Z. */
const z = (local: string) => new Date(`${MONDAY}T${local}:00+01:00`).toISOString();

async function book(provider: Provider, branch: Branch, start: string, end: string, cancelled = false) {
  const a = fx.em.create(Appointment, {
    clinic: clinicId,
    patient,
    branch,
    provider,
    type: null,
    status: null,
    startAt: new Date(start),
    endAt: new Date(end),
    note: null,
    cancelledAt: cancelled ? new Date('2026-11-01T09:00:00Z') : null,
    cancellationReason: null,
    createdAt: new Date('2026-11-01T09:00:00Z'),
    updatedAt: new Date('2026-11-01T09:00:00Z'),
  });
  await fx.em.flush();
  return a;
}

describe('slots', () => {
  it('step 15 minutes from each interval start; a slot ending at the interval end is in, one crossing it is out; lunch is a gap', async () => {
    const list = await monday({ provider_id: ids.p1 });
    expect(starts(list)).toEqual(
      [
        ...['09:00', '09:15', '09:30', '09:45', '10:00', '10:15', '10:30', '10:45', '11:00'],
        ...['13:00', '13:15', '13:30', '13:45', '14:00'],
      ].map(z),
    );
    expect(list[0]).toEqual({
      start: z('09:00'),
      end: z('10:00'),
      provider_id: ids.p1,
      branch_id: ids.branch,
    });
    // The type's duration: 30 minutes reach 11:30 in the morning.
    const short = await slots({
      appointment_type_id: ids.t30,
      from: MONDAY,
      to: '2026-12-08',
      provider_id: ids.p1,
    });
    expect(starts(short)).toContain(z('11:30'));
    expect(starts(short)).not.toContain(z('11:45'));
    expect(short[0].end).toBe(z('09:30'));
  });

  it('ordered by start, then provider, then branch; filters by provider and branch', async () => {
    const all = await monday();
    expect(all.slice(0, 2)).toEqual([
      { start: z('09:00'), end: z('10:00'), provider_id: ids.p1, branch_id: ids.branch },
      { start: z('09:00'), end: z('10:00'), provider_id: ids.p2, branch_id: ids.branch2 },
    ]);
    const sorted = [...all].sort(
      (a, b) =>
        a.start.localeCompare(b.start) ||
        Number(a.provider_id.slice(4)) - Number(b.provider_id.slice(4)) ||
        Number(a.branch_id.slice(3)) - Number(b.branch_id.slice(3)),
    );
    expect(all).toEqual(sorted);
    expect(await monday({ provider_id: ids.p2 })).toEqual(all.filter((s) => s.provider_id === ids.p2));
    expect(await monday({ branch_id: ids.branch2 })).toEqual(all.filter((s) => s.branch_id === ids.branch2));
    expect(await monday({ branch_id: ids.branch2, provider_id: ids.p1 })).toEqual([]);
    // Tuesday: nobody works.
    expect(await slots({ appointment_type_id: ids.t60, from: '2026-12-08', to: '2026-12-09' })).toEqual([]);
  });

  it('a booking blocks what it overlaps; one ending at 10:00 leaves the 10:00 slot free', async () => {
    await book(ent.p1 as Provider, ent.branch as Branch, z('09:00'), z('10:00'));
    const list = starts(await monday({ provider_id: ids.p1 }));
    expect(list[0]).toBe(z('10:00'));
    for (const t of ['09:00', '09:15', '09:30', '09:45']) expect(list).not.toContain(z(t));
    // One in the middle of the afternoon: the slots around it must not touch it.
    await book(ent.p1 as Provider, ent.branch as Branch, z('13:40'), z('13:50'));
    const after = starts(await monday({ provider_id: ids.p1 }));
    expect(after.filter((s) => s >= z('13:00'))).toEqual([z('14:00')]);
  });

  it('a cancelled appointment frees its slot', async () => {
    await book(ent.p1 as Provider, ent.branch as Branch, z('09:00'), z('10:00'), true);
    expect(starts(await monday({ provider_id: ids.p1 }))[0]).toBe(z('09:00'));
  });

  it('a booking at another branch blocks the provider; another provider is not blocked', async () => {
    await book(ent.p1 as Provider, ent.branch2 as Branch, z('09:00'), z('11:00'));
    expect(starts(await monday({ provider_id: ids.p1 }))[0]).toBe(z('11:00'));
    expect(starts(await monday({ provider_id: ids.p2 }))).toEqual([z('09:00')]);
  });

  it('no slot starts before now (the injected clock); one starting exactly now is in', async () => {
    app.clock.set(z('10:05'));
    expect(starts(await monday({ provider_id: ids.p1 }))[0]).toBe(z('10:15'));
    app.clock.set(z('10:15'));
    expect(starts(await monday({ provider_id: ids.p1 }))[0]).toBe(z('10:15'));
    app.clock.set('2026-12-08T00:00:00Z');
    expect(await monday()).toEqual([]);
  });

  it('[from, to) bounds the slot starts; instants with an offset work as dates do', async () => {
    const list = await slots({
      appointment_type_id: ids.t60,
      provider_id: ids.p1,
      from: '2026-12-07T10:00:00+01:00',
      to: '2026-12-07T13:00:00Z',
    });
    // 13:00Z is 14:00 local: the 14:00 slot starts at `to` and is out.
    expect(starts(list)).toEqual(
      ['10:00', '10:15', '10:30', '10:45', '11:00', '13:00', '13:15', '13:30', '13:45'].map(z),
    );
    // A date is the clinic's midnight: Monday's slots are Monday's, not the evening before's.
    const dates = await slots({ appointment_type_id: ids.t60, from: MONDAY, to: '2026-12-08' });
    const utcDates = await slots({
      appointment_type_id: ids.t60,
      from: '2026-12-07T00:00:00Z',
      to: '2026-12-08T00:00:00Z',
    });
    expect(dates).toEqual(utcDates);
  });

  it('reads bookings with one statement, whatever the range', async () => {
    const count = async (to: string) => {
      const before = app.queries.length;
      await slots({ appointment_type_id: ids.t60, from: '2026-12-01', to });
      const sql = app.queries.slice(before);
      expect(sql.filter((q) => /from "appointment"/.test(q))).toHaveLength(1);
      return sql.filter((q) => /\bselect\b/i.test(q)).length;
    };
    expect(await count('2027-01-01')).toBe(await count('2026-12-02'));
  });
});

describe('daylight saving (Europe/Berlin)', () => {
  beforeEach(() => app.clock.set('2026-01-01T00:00:00Z'));

  const sunday = async (date: string, type = ids.t60) =>
    starts(await slots({ appointment_type_id: type, provider_id: ids.p3, from: date, to: nextDay(date) }));
  const nextDay = (d: string) =>
    new Date(Date.parse(`${d}T12:00:00Z`) + 86_400_000).toISOString().slice(0, 10);

  it('09:00 local is 08:00Z in winter and 07:00Z in summer, on both sides of each change', async () => {
    expect(await sunday('2026-03-22')).toContain('2026-03-22T08:00:00.000Z');
    expect(await sunday('2026-03-29')).toContain('2026-03-29T07:00:00.000Z');
    expect(await sunday('2026-10-18')).toContain('2026-10-18T07:00:00.000Z');
    expect(await sunday('2026-10-25')).toContain('2026-10-25T08:00:00.000Z');
    // Each 09:00–10:00 interval holds exactly its one 60-minute slot.
    for (const d of ['2026-03-22', '2026-03-29', '2026-10-18', '2026-10-25'])
      expect((await sunday(d)).filter((s) => s >= `${d}T05:00`)).toHaveLength(1);
  });

  it('spring forward: 01:00–04:00 spans the missing hour, so it holds two real hours (slots skip 02:xx)', async () => {
    // 01:00+01:00 = 00:00Z to 04:00+02:00 = 02:00Z.
    expect((await sunday('2026-03-29')).filter((s) => s < '2026-03-29T05:00')).toEqual([
      '2026-03-29T00:00:00.000Z', // 01:00 CET
      '2026-03-29T00:15:00.000Z',
      '2026-03-29T00:30:00.000Z',
      '2026-03-29T00:45:00.000Z',
      '2026-03-29T01:00:00.000Z', // 03:00 CEST: the clock jumped from 02:00
    ]);
  });

  it('fall back: 01:00–04:00 holds four real hours, the repeated hour twice', async () => {
    // 01:00+02:00 = 23:00Z the day before, to 04:00+01:00 = 03:00Z.
    const night = (await sunday('2026-10-25')).filter((s) => s < '2026-10-25T05:00');
    expect(night[0]).toBe('2026-10-24T23:00:00.000Z');
    expect(night.at(-1)).toBe('2026-10-25T02:00:00.000Z');
    expect(night).toHaveLength(13);
  });

  it('a wall-clock time in the gap moves forward by the gap; one that exists twice is the earlier', async () => {
    const put = (start: string, end: string) =>
      app.send(
        'PUT',
        `/v1/catalog/providers/${ids.p3}/working_hours`,
        { data: [{ branch_id: ids.branch, weekday: 7, start, end }] },
        write,
      );
    try {
      await put('02:30', '04:00');
      // 02:30 does not exist on 2026-03-29: read as 03:30 CEST (01:30Z), to 04:00 CEST (02:00Z).
      expect(await sunday('2026-03-29', ids.t30)).toEqual(['2026-03-29T01:30:00.000Z']);
      await put('02:30', '03:00');
      // 02:30 happens twice on 2026-10-25: the first, 02:30 CEST (00:30Z); 03:00 CET is 02:00Z.
      const fall = await sunday('2026-10-25', ids.t30);
      expect(fall[0]).toBe('2026-10-25T00:30:00.000Z');
      expect(fall.at(-1)).toBe('2026-10-25T01:30:00.000Z');
    } finally {
      await put('01:00', '04:00');
      await app.send(
        'PUT',
        `/v1/catalog/providers/${ids.p3}/working_hours`,
        {
          data: [
            { branch_id: ids.branch, weekday: 7, start: '01:00', end: '04:00' },
            { branch_id: ids.branch, weekday: 7, start: '09:00', end: '10:00' },
          ],
        },
        write,
      );
    }
  });

  it('the 31-day bound counts calendar days of the clinic across a change', async () => {
    // 2026-10-01 to 2026-11-01 is 31 days but 745 hours.
    expect(
      (await app.get(`/v1/availability?appointment_type_id=${ids.t60}&from=2026-10-01&to=2026-11-01`, read))
        .status,
    ).toBe(200);
  });
});

describe('refusals', () => {
  const base = () => ({ appointment_type_id: ids.t60, from: '2026-12-01', to: '2026-12-08' });
  const cases: [string, () => Record<string, string>, string][] = [
    ['no appointment_type_id', () => ({ from: '2026-12-01', to: '2026-12-08' }), 'appointment_type_id'],
    ['no from', () => ({ appointment_type_id: ids.t60, to: '2026-12-08' }), 'from'],
    ['no to', () => ({ appointment_type_id: ids.t60, from: '2026-12-01' }), 'to'],
    ['a bad from (checked before a missing type)', () => ({ from: 'yesterday' }), 'from'],
    ['a bad to', () => ({ ...base(), to: '2026-13-01' }), 'to'],
    ['a date-time without an offset', () => ({ ...base(), from: '2026-12-01T09:00:00' }), 'from'],
    ['to equal to from', () => ({ ...base(), to: '2026-12-01' }), 'to'],
    ['to before from', () => ({ ...base(), to: '2026-11-30' }), 'to'],
    ['more than 31 days', () => ({ ...base(), to: '2027-01-02' }), 'to'],
    ['a malformed type id', () => ({ ...base(), appointment_type_id: 'prv_1' }), 'appointment_type_id'],
    ['an unknown type', () => ({ ...base(), appointment_type_id: 'apt_99999999' }), 'appointment_type_id'],
    [
      "another clinic's type",
      () => ({ ...base(), appointment_type_id: foreign.type }),
      'appointment_type_id',
    ],
    ['a disabled type', () => ({ ...base(), appointment_type_id: ids.tDisabled }), 'appointment_type_id'],
    ["another clinic's branch", () => ({ ...base(), branch_id: foreign.branch }), 'branch_id'],
    ["another clinic's provider", () => ({ ...base(), provider_id: foreign.provider }), 'provider_id'],
    ['a malformed provider id', () => ({ ...base(), provider_id: 'x' }), 'provider_id'],
    ['an unknown parameter', () => ({ ...base(), duration: '30' }), 'duration'],
  ];
  it.each(cases)('%s: 422 naming it', async (_name, query, param) => {
    const r = await app.get(`/v1/availability?${new URLSearchParams(query())}`, read);
    expect(r.status, JSON.stringify(r.body)).toBe(422);
    expect(r.body.error).toMatchObject({ code: 'validation_failed', param });
  });

  it('31 days exactly are fine', async () => {
    expect((await slots({ ...base(), to: '2027-01-01' })).length).toBeGreaterThan(0);
  });

  it(`more than ${MAX_SLOTS} slots is a 422 asking for a narrower question`, async () => {
    // Another clinic: two providers working round the clock, every day, 15-minute appointments.
    const c = await app.clinicWithKey('dental', ['appointments:read', 'catalog:write'], 'Busy');
    const busy = fixtures(app.orm, c.clinicId);
    const cat = await busy.catalog();
    const other = busy.em.create(Provider, {
      clinic: c.clinicId,
      name: 'Dr. Also',
      type: 'dentist',
      color: null,
    });
    await busy.em.flush();
    const t15 = (
      await app.post('/v1/catalog/appointments/types', { name: 'Quick', duration_minutes: 15 }, c.key)
    ).body.data.id;
    const week = [1, 2, 3, 4, 5, 6, 7].map((weekday) => ({
      branch_id: `br_${cat.branch.id}`,
      weekday,
      start: '00:00',
      end: '24:00',
    }));
    for (const p of [`prv_${cat.provider.id}`, `prv_${other.id}`])
      expect(
        (await app.send('PUT', `/v1/catalog/providers/${p}/working_hours`, { data: week }, c.key)).status,
      ).toBe(200);
    const q = { appointment_type_id: t15, from: '2026-12-01', to: '2027-01-01' };
    const r = await app.get(`/v1/availability?${new URLSearchParams(q)}`, c.key);
    expect(r.status).toBe(422);
    expect(r.body.error.param).toBe('to');
    // One provider's month (31 × 96 slots) is within the bound.
    expect((await slots({ ...q, provider_id: `prv_${cat.provider.id}` }, c.key)).length).toBe(31 * 96);
  });

  it('needs appointments:read', async () => {
    const key = await app.key(clinicId, ['catalog:read']);
    const r = await app.get(`/v1/availability?${new URLSearchParams(base())}`, key);
    expect(r.status).toBe(403);
    expect(r.body.error.required_scopes).toEqual(['appointments:read']);
  });
});

describe('GraphQL', () => {
  const query = `query($t: String!, $from: String!, $to: String!, $p: String) {
    availability(appointmentTypeId: $t, from: $from, to: $to, providerId: $p) { start end providerId branchId } }`;

  it('availability is the same list as REST', async () => {
    await book(ent.p1 as Provider, ent.branch as Branch, z('09:30'), z('10:00'));
    const r = await app.gql(query, { t: ids.t60, from: MONDAY, to: '2026-12-08' }, read);
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data.availability).toEqual(graphqlOf(await monday(), AvailableSlot));
  });

  it('refusals carry code and param', async () => {
    const r = await app.gql(query, { t: ids.t60, from: MONDAY, to: '2027-02-08', p: ids.p1 }, read);
    expect(r.body.data.availability).toBeNull();
    expect(r.body.errors[0].extensions).toMatchObject({ code: 'validation_failed', param: 'to' });
    // A parameter with a two-word name is named as the query wrote it, in the message too.
    const bad = await app.gql(query, { t: 'nope', from: MONDAY, to: '2026-12-08' }, read);
    expect(bad.body.errors[0].extensions).toMatchObject({
      code: 'validation_failed',
      param: 'appointmentTypeId',
    });
    expect(bad.body.errors[0].message).toMatch(/^appointmentTypeId /);
  });
});
