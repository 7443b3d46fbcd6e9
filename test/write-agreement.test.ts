import type { EntityMetadata } from '@mikro-orm/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { insertedProps } from '../src/db/insert-row.ts';
import { entityNamed } from '../src/entities/index.ts';
import { toE164 } from '../src/lib/phone.ts';
import '../src/services/all-writes.ts';
import { type Field, ownIncludesOf, type Resource } from '../src/services/resource.ts';
import { allWrites, type WriteOperation } from '../src/services/writes.ts';
import { fixtures } from './fixtures.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * A field is added in one place and left out of another (issue 26): these fail when an entity
 * column is not in its resource's definition (the presenter) or in any of its writes' inputs, and
 * when a write accepts a field and does not store it (a round trip per write: every input field
 * written with a distinctive value, then read back by GET). docs/adding-a-resource.md lists what
 * they catch. The migrations' side is test/schema-agreement.test.ts.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});

const writes = allWrites();
/** Resources a client creates (a 201 write); chat's records come from the network and sends. */
const created = [...new Set(writes.filter((w) => w.status === 201 && !w.list).map((w) => w.resource))];
const writesOf = (r: Resource) => writes.filter((w) => w.resource === r && !w.list);
const inputKeys = (w: WriteOperation) => Object.keys(w.input.shape);
const isUpdate = (w: WriteOperation) => w.method === 'PATCH';

/** Columns no client writes, by entity (`*`: every entity), and why. */
const SET_BY_SERVICE: Record<string, Record<string, string>> = {
  '*': {
    clinic: "the key's clinic",
    createdAt: "the write's clock",
    updatedAt: "the write's clock (the ETag's version)",
    disabledAt: 'the disable and enable writes',
  },
  Appointment: { cancelledAt: 'the cancel write' },
  Treatment: { cancelledAt: 'the cancel write', patient: 'the path (/patients/:id/treatments)' },
  Payment: {
    patient: 'the path (/patients/:id/payments)',
    isRefund: 'the refund write',
    refundOf: 'the refund write (its path)',
    receiptNumber: "the clinic's billing system; the API writes none",
    cancelledAt: 'the cancel write',
  },
  Call: {
    patient: "matched by the other side's phone",
    endedAt: 'started_at plus duration',
    recordingAvailable: 'the recording write (its download)',
    recordingPath: 'the recording write (its download)',
    recordingMime: 'the recording write (the bytes sniffed)',
  },
  Patient: {
    emailLower: 'email, folded for search',
    nameFl: 'the names, folded for search',
    nameLf: 'the names, folded for search',
    balance: 'the sum of the payments',
  },
  WebhookSubscription: {
    secret: 'generated, shown once (creation and rotate-secret)',
    previousSecret: 'the rotate-secret write, never shown',
    previousSecretExpiresAt: 'the rotate-secret write',
    consecutiveFailures: 'the delivery worker',
    failingSince: 'the delivery worker',
    lastFailureAt: 'the delivery worker',
    disabledReason: 'auto-disable',
    deletedAt: 'the DELETE write',
  },
};

/** Columns written under an input name other than their field's (`<field>` or `<join>_id`). */
const INPUT_NAMED: Record<string, Record<string, string>> = {
  Appointment: { cancellationReason: 'reason' },
  Treatment: { cancellationReason: 'reason' },
  Call: { transcriptStatus: 'status', transcriptSummary: 'summary', transcriptSegments: 'segments' },
  Payment: { methodDetails: 'method' },
  Patient: { owner: 'client_id' },
};

/** Columns written and, on purpose, never presented. */
const NOT_PRESENTED: Record<string, Record<string, string>> = {
  Payment: { methodDetails: 'card, check and bank details are never returned (docs/decisions.md)' },
};

/**
 * Columns a client writes when it creates the object only, or when it changes it only, on
 * purpose, and why: a field left out of the update input by accident (create-only) or out of the
 * create input (update-only) fails the test below until it is listed here.
 */
const ONE_WAY: Record<string, Record<string, { only: 'create' | 'update'; why: string }>> = {
  Appointment: {
    patient: { only: 'create', why: 'a booking stays with its patient; book anew for another' },
  },
  Call: Object.fromEntries(
    ['direction', 'fromPhone', 'toPhone', 'startedAt', 'durationSeconds', 'answered', 'recorded'].map((p) => [
      p,
      {
        only: 'create',
        why: "what the phone system reported of the call; its change sets the staff's note only",
      },
    ]),
  ),
  WebhookSubscription: {
    enabled: { only: 'update', why: 'a new subscription starts enabled; the change pauses or resumes it' },
  },
};

/** The fields of a resource that present a property. */
function fieldsOf(r: Resource, prop: string): [string, Field][] {
  return Object.entries(r.fields).filter(([, f]) => {
    const s = f.source;
    if (s.kind === 'column' || s.kind === 'ref' || s.kind === 'join') return s.prop === prop;
    return (s.kind === 'derived' || s.kind === 'id') && (s.needs ?? []).includes(prop);
  });
}

/** The body names a field is written by: a join's `<name>_id`, any other field its own name. */
const inputNamesOf = ([name, f]: [string, Field]) => (f.source.kind === 'join' ? `${name}_id` : name);

const metaOf = (r: Resource): EntityMetadata => app.orm.getMetadata().get(entityNamed(r.kind));

describe('every column of a resource a client creates', () => {
  it.each(created.map((r) => [r.name, r] as const))(
    '%s: is in the definition and in a write input',
    (_, r) => {
      const meta = metaOf(r);
      const accepted = new Set(writesOf(r).flatMap(inputKeys));
      const problems: string[] = [];
      for (const p of insertedProps(meta)) {
        if (SET_BY_SERVICE['*'][p.name] ?? SET_BY_SERVICE[r.kind]?.[p.name]) continue;
        const fields = fieldsOf(r, p.name);
        if (!fields.length && !NOT_PRESENTED[r.kind]?.[p.name])
          problems.push(
            `${r.kind}.${p.name} is not in the definition of ${r.name} (add a field, src/services/**/*.resource.ts)`,
          );
        const names = INPUT_NAMED[r.kind]?.[p.name]
          ? [INPUT_NAMED[r.kind][p.name]]
          : fields.map(inputNamesOf);
        if (names.length && !names.some((n) => accepted.has(n)))
          problems.push(
            `${r.kind}.${p.name} is in no write input of ${r.name} (expected ${names.join(' or ')})`,
          );
      }
      expect(problems).toEqual([]);
    },
  );

  it.each(created.filter((r) => writesOf(r).some(isUpdate)).map((r) => [r.name, r] as const))(
    '%s: a column written on create only or on update only is listed with its reason',
    (_, r) => {
      const meta = metaOf(r);
      const takenBy = (which: (w: WriteOperation) => boolean) =>
        new Set(writesOf(r).filter(which).flatMap(inputKeys));
      const [onCreate, onUpdate] = [takenBy((w) => w.status === 201), takenBy(isUpdate)];
      const problems: string[] = [];
      for (const p of insertedProps(meta)) {
        const names = INPUT_NAMED[r.kind]?.[p.name]
          ? [INPUT_NAMED[r.kind][p.name]]
          : fieldsOf(r, p.name).map(inputNamesOf);
        const [c, u] = [names.some((n) => onCreate.has(n)), names.some((n) => onUpdate.has(n))];
        const only = c && !u ? 'create' : u && !c ? 'update' : undefined;
        const listed = ONE_WAY[r.kind]?.[p.name]?.only;
        if (only !== listed)
          problems.push(
            only
              ? `${r.kind}.${p.name} is written on ${only} only (${names.join(' or ')}): add it to the other write's input (its definition's write.on: 'both'), or list it in ONE_WAY with the reason`
              : `${r.kind}.${p.name} is listed in ONE_WAY as ${listed} only, and is written ${c ? 'by both' : 'by neither'}`,
          );
      }
      expect(problems).toEqual([]);
    },
  );

  it('names only real columns in its exceptions (a stale one would hide the next column of its name)', () => {
    const stale: string[] = [];
    for (const table of [SET_BY_SERVICE, INPUT_NAMED, NOT_PRESENTED, ONE_WAY])
      for (const [kind, props] of Object.entries(table)) {
        if (kind === '*') continue;
        const meta = app.orm.getMetadata().get(entityNamed(kind));
        for (const prop of Object.keys(props))
          if (!insertedProps(meta).some((p) => p.name === prop)) stale.push(`${kind}.${prop}`);
      }
    expect(stale).toEqual([]);
  });
});

// ---------- round trips: what a write accepts is stored, and read back by GET ----------

interface Ctx {
  dental: { key: string; refs: Awaited<ReturnType<typeof dentalRefs>> };
  vet: { key: string; refs: Awaited<ReturnType<typeof vetRefs>> };
  /** The id each create answered, by write name. */
  made: Record<string, string>;
}

async function dentalRefs(clinicId: number) {
  const fx = fixtures(app.orm, clinicId);
  const [a, b] = [await fx.catalog(), await fx.catalog()];
  const patient = await fx.patient({ first: 'Round', last: 'Trip', phone: '0501230000' });
  return { a, b, patient };
}
async function vetRefs(clinicId: number) {
  const fx = fixtures(app.orm, clinicId);
  const cat = await fx.catalog();
  const [o1, o2] = [
    await fx.owner({ first: 'Ada', last: 'One' }),
    await fx.owner({ first: 'Bo', last: 'Two' }),
  ];
  return { cat, o1, o2 };
}

interface Trip {
  clinic: 'dental' | 'vet';
  /** The POST or PATCH path, `:id` the object (a create's id, or `of`'s) or its parent. */
  path: (c: Ctx) => string;
  /** For a change: the create whose object it changes. */
  of?: string;
  /** Where GET reads the object, by id (a catalog list has no GET by id: its list). */
  get: string;
  body: (c: Ctx) => Record<string, unknown>;
  /** Input fields read back other than as the field of their name (or `<join>_id`). */
  readAs?: Record<string, (got: any) => unknown>;
  /** Input fields that are not stored, by design, with their value and why (sent when the input has them). */
  notStored?: Record<string, { value: unknown; why: string }>;
}

const pid = (n: { id: number }, prefix: string) => `${prefix}_${n.id}`;
const address = (tag: string) => ({
  line1: `${tag} 1`,
  line2: `${tag} 2`,
  city: `${tag} city`,
  postal_code: `${tag}-pc`,
  country: 'IL',
});

/** One per create and change of a resource a client creates (the test below checks none is missing). */
const TRIPS: Record<string, Trip> = {
  createAppointment: {
    clinic: 'dental',
    path: () => '/appointments',
    get: '/appointments',
    body: ({ dental: { refs } }) => ({
      patient_id: pid(refs.patient, 'pat'),
      branch_id: pid(refs.a.branch, 'br'),
      provider_id: pid(refs.a.provider, 'prv'),
      type_id: pid(refs.a.type, 'apt'),
      status_id: pid(refs.a.status, 'aps'),
      start: '2031-03-04T08:15:00.000Z',
      end: '2031-03-04T08:55:00.000Z',
      note: 'rt booking note',
    }),
    notStored: {
      outside_hours: {
        value: true,
        why: "a staff override of the opening hours' check, not a property of the booking",
      },
    },
  },
  updateAppointment: {
    clinic: 'dental',
    of: 'createAppointment',
    path: (c) => `/appointments/${c.made.createAppointment}`,
    get: '/appointments',
    body: ({ dental: { refs } }) => ({
      branch_id: pid(refs.b.branch, 'br'),
      provider_id: pid(refs.b.provider, 'prv'),
      type_id: pid(refs.b.type, 'apt'),
      status_id: pid(refs.b.status, 'aps'),
      start: '2031-03-05T10:05:00.000Z',
      end: '2031-03-05T10:50:00.000Z',
      note: 'rt changed note',
    }),
    notStored: {
      outside_hours: {
        value: true,
        why: "a staff override of the opening hours' check, not a property of the booking",
      },
    },
  },
  createCall: {
    clinic: 'dental',
    path: () => '/calls',
    get: '/calls',
    body: () => ({
      direction: 'outbound',
      from: '03-5550199',
      to: '050-1230000',
      started_at: '2031-02-01T07:00:00.000Z',
      duration: 97,
      answered: true,
      recorded: true,
      note: 'rt call note',
    }),
  },
  updateCall: {
    clinic: 'dental',
    of: 'createCall',
    path: (c) => `/calls/${c.made.createCall}`,
    get: '/calls',
    body: () => ({ note: 'rt call note, changed' }),
  },
  recordPayment: {
    clinic: 'dental',
    path: (c) => `/patients/${pid(c.dental.refs.patient, 'pat')}/payments`,
    get: '/payments',
    body: ({ dental: { refs } }) => ({
      amount: 123.45,
      currency: 'EUR',
      method: { type: 'check', check: { number: '778812', bank: 'rt bank' } },
      billing_account_id: pid(refs.b.account, 'ba'),
      paid_at: '2031-02-02T09:30:00.000Z',
      note: 'rt payment note',
    }),
    // The details are stored for the clinic and never returned: only the type reads back.
    readAs: { method: (g) => ({ type: g.method.type, check: { number: '778812', bank: 'rt bank' } }) },
  },
  refundPayment: {
    clinic: 'dental',
    path: (c) => `/payments/${c.made.recordPayment}/refund`,
    get: '/payments',
    body: () => ({ amount: 23.45, note: 'rt refund note' }),
  },
  createTreatment: {
    clinic: 'dental',
    path: (c) => `/patients/${pid(c.dental.refs.patient, 'pat')}/treatments`,
    get: '/treatments',
    body: (c) => ({
      appointment_id: c.made.createAppointment,
      treatment_id: pid(c.dental.refs.a.menuItem, 'trm'),
      provider_id: pid(c.dental.refs.a.provider, 'prv'),
      description: 'rt description',
      teeth: ['11', '21'],
      price: 311.5,
      status: 'planned',
      performed_at: '2031-02-03T10:00:00.000Z',
      note: 'rt treatment note',
    }),
  },
  updateTreatment: {
    clinic: 'dental',
    of: 'createTreatment',
    path: (c) => `/treatments/${c.made.createTreatment}`,
    get: '/treatments',
    body: (c) => ({
      appointment_id: null,
      treatment_id: pid(c.dental.refs.b.menuItem, 'trm'),
      provider_id: pid(c.dental.refs.b.provider, 'prv'),
      description: 'rt description, changed',
      teeth: ['36'],
      price: 77.25,
      status: 'completed',
      performed_at: '2031-02-04T11:00:00.000Z',
      note: 'rt treatment note, changed',
    }),
  },
  createPatient: {
    clinic: 'dental',
    path: () => '/patients',
    get: '/patients',
    body: (c) => ({
      first_name: 'Rtfirst',
      last_name: 'Rtlast',
      phone: '050-7771111',
      email: 'rt.first@example.com',
      address: address('rt'),
      gender: 'female',
      birth_date: '1984-07-09',
      status_id: pid(c.dental.refs.a.patientStatus, 'pst'),
      contacts: [{ type: 'email', value: 'rt.other@example.com', label: 'work' }],
      id_number: 'RT-12345',
    }),
  },
  updatePatient: {
    clinic: 'dental',
    of: 'createPatient',
    path: (c) => `/patients/${c.made.createPatient}`,
    get: '/patients',
    body: (c) => ({
      first_name: 'Rtfirst2',
      last_name: 'Rtlast2',
      phone: '050-7772222',
      email: 'rt.second@example.com',
      address: address('rt2'),
      gender: 'male',
      birth_date: '1985-08-10',
      status_id: pid(c.dental.refs.b.patientStatus, 'pst'),
      contacts: [{ type: 'phone', value: '050-7773333', label: 'home' }],
      id_number: 'RT-67890',
    }),
  },
  createAnimal: {
    clinic: 'vet',
    path: () => '/animals',
    get: '/animals',
    body: ({ vet: { refs } }) => ({
      client_id: pid(refs.o1, 'own'),
      first_name: 'Rtpet',
      species_id: pid(refs.cat.species, 'spc'),
      breed_id: pid(refs.cat.breed, 'brd'),
      gender: 'male',
      birth_date: '2020-05-06',
      status_id: pid(refs.cat.patientStatus, 'pst'),
    }),
  },
  updateAnimal: {
    clinic: 'vet',
    of: 'createAnimal',
    path: (c) => `/animals/${c.made.createAnimal}`,
    get: '/animals',
    body: ({ vet: { refs } }) => ({
      client_id: pid(refs.o2, 'own'),
      first_name: 'Rtpet2',
      species_id: pid(refs.cat.cat, 'spc'),
      breed_id: pid(refs.cat.catBreed, 'brd'),
      gender: 'female',
      birth_date: '2021-06-07',
      status_id: null,
    }),
  },
  createClient: {
    clinic: 'vet',
    path: () => '/clients',
    get: '/clients',
    body: () => ({
      first_name: 'Rtclient',
      last_name: 'Rtowner',
      phone: '050-7774444',
      email: 'rt.client@example.com',
      address: address('rtc'),
    }),
  },
  updateClient: {
    clinic: 'vet',
    of: 'createClient',
    path: (c) => `/clients/${c.made.createClient}`,
    get: '/clients',
    body: () => ({
      first_name: 'Rtclient2',
      last_name: 'Rtowner2',
      phone: '050-7775555',
      email: 'rt.client2@example.com',
      address: address('rtc2'),
    }),
  },
  createWebhook: {
    clinic: 'dental',
    path: () => '/webhooks',
    get: '/webhooks',
    body: () => ({
      url: 'https://hooks.example.com/rt',
      event_types: ['patient.created', 'payment.recorded'],
      description: 'rt webhook description 1',
    }),
  },
  updateWebhook: {
    clinic: 'dental',
    of: 'createWebhook',
    path: (c) => `/webhooks/${c.made.createWebhook}`,
    get: '/webhooks',
    body: () => ({
      url: 'https://hooks.example.com/rt2',
      event_types: ['appointment.created'],
      description: 'rt webhook description 2',
      enabled: false,
    }),
  },
  ...catalogTrips(),
};

/** The catalog's lists: one create and one change each, in two clinics' worth of values. */
function catalogTrips(): Record<string, Trip> {
  const lists: [string, string, 'dental' | 'vet', (c: Ctx, n: 1 | 2) => Record<string, unknown>][] = [
    [
      'Branch',
      '/catalog/branches',
      'dental',
      (_, n) => ({
        name: `rt branch ${n}`,
        phone: n === 1 ? '03-5551111' : '03-5552222',
        address: address(`rtb${n}`),
        color: n === 1 ? '#123456' : '#654321',
      }),
    ],
    [
      'AppointmentType',
      '/catalog/appointments/types',
      'dental',
      (_, n) => ({
        name: `rt type ${n}`,
        duration_minutes: n === 1 ? 35 : 55,
        color: n === 1 ? '#aa0011' : '#bb0022',
      }),
    ],
    [
      'AppointmentStatus',
      '/catalog/appointments/statuses',
      'dental',
      (_, n) => ({
        name: `rt status ${n}`,
        color: n === 1 ? '#aa0033' : '#bb0044',
        enabled: n === 2,
      }),
    ],
    [
      'TreatmentMenuItem',
      '/catalog/treatments',
      'dental',
      (_, n) => ({
        name: `rt item ${n}`,
        code: `RT${n}`,
        price: n === 1 ? 41.5 : 42.75,
        color: n === 1 ? '#aa0055' : '#bb0066',
        category_id: null,
      }),
    ],
    [
      'Provider',
      '/catalog/providers',
      'dental',
      (_, n) => ({
        name: `rt provider ${n}`,
        type: n === 1 ? 'hygienist' : 'surgeon',
        color: n === 1 ? '#aa0077' : '#bb0088',
      }),
    ],
    [
      'BillingAccount',
      '/catalog/billing/accounts',
      'dental',
      (_, n) => ({
        business_name: `rt business ${n}`,
        business_id: `51500000${n}`,
      }),
    ],
    ['Species', '/catalog/species', 'vet', (_, n) => ({ name: `rt species ${n}` })],
    [
      'Breed',
      '/catalog/breeds',
      'vet',
      (c, n) => ({
        name: `rt breed ${n}`,
        species_id: pid(n === 1 ? c.vet.refs.cat.species : c.vet.refs.cat.cat, 'spc'),
      }),
    ],
    [
      'Vaccine',
      '/catalog/vaccines',
      'vet',
      (c, n) => ({
        name: `rt vaccine ${n}`,
        batch_required: n === 1,
        code: `RTV${n}`,
        species_id: pid(n === 1 ? c.vet.refs.cat.species : c.vet.refs.cat.cat, 'spc'),
        interval_months: n === 1 ? 7 : 11,
        next_vaccine_id: n === 1 ? pid(c.vet.refs.cat.rabies, 'vac') : null,
        price: n === 1 ? 61.25 : 62.5,
      }),
    ],
    [
      'Measurement',
      '/catalog/measurements',
      'vet',
      (_, n) => ({
        name: `rt measurement ${n}`,
        is_required: n === 2,
        unit: n === 1 ? 'cm' : 'mmHg',
      }),
    ],
  ];
  return Object.fromEntries(
    lists.flatMap(([name, path, clinic, body]) => [
      [`create${name}`, { clinic, path: () => path, get: path, body: (c: Ctx) => body(c, 1) }],
      [
        `update${name}`,
        {
          clinic,
          of: `create${name}`,
          path: (c: Ctx) => `${path}/${c.made[`create${name}`]}`,
          get: path,
          body: (c: Ctx) => body(c, 2),
        },
      ],
    ]),
  );
}

const tripped = writes.filter(
  (w) => created.includes(w.resource) && !w.list && (w.status === 201 || w.method === 'PATCH'),
);

it('every create and change of a resource a client creates has a round trip', () => {
  expect(tripped.filter((w) => !TRIPS[w.name]).map((w) => w.name)).toEqual([]);
});

describe('round trip: every field a write accepts is stored and read back by GET', () => {
  const ctx = {} as Ctx;
  beforeAll(async () => {
    const d = await app.clinicWithKey('dental', ['patients:write']);
    const v = await app.clinicWithKey('veterinary', ['patients:write']);
    const all = [
      'webhooks:manage',
      ...(await import('../src/auth/scopes.ts')).readScopes,
      ...(await import('../src/auth/scopes.ts')).writeScopes,
    ];
    ctx.dental = { key: await app.key(d.clinicId, all), refs: await dentalRefs(d.clinicId) };
    ctx.vet = { key: await app.key(v.clinicId, all), refs: await vetRefs(v.clinicId) };
    ctx.made = {};
    app.clock.set('2031-02-10T12:00:00Z');
  });

  // In the order of allWrites(): a change after its create, a treatment after the booking it names.
  it.each(tripped.filter((w) => TRIPS[w.name]).map((w) => [w.name, w] as const))('%s', async (_, w) => {
    const trip = TRIPS[w.name];
    const { key } = ctx[trip.clinic];
    const keys = inputKeys(w);
    const body = trip.body(ctx);
    for (const [k, { value }] of Object.entries(trip.notStored ?? {})) if (keys.includes(k)) body[k] = value;
    // A plain text field needs no value here: one of its own name is made up.
    for (const k of keys) if (!(k in body) && isPlainText(w.input.shape[k])) body[k] = `rt ${w.name} ${k}`;
    // Every field of the input, so a field added to it needs a value here to pass.
    expect(Object.keys(body).sort(), `${w.name}: give every input field a distinctive value`).toEqual(
      [...keys].sort(),
    );
    const r = await app.send(w.method, `/v1${trip.path(ctx)}`, body, key);
    expect(r.status, JSON.stringify(r.body)).toBe(w.status);
    const id = r.body.data.id as string;
    if (!trip.of) ctx.made[w.name] = id;
    const got = await readBack(w.resource, trip.get, id, key);
    const wrong: string[] = [];
    for (const [k, sent] of Object.entries(body)) {
      if (trip.notStored?.[k]) continue;
      const read = trip.readAs?.[k] ?? readerOf(w.resource, k);
      if (!read) wrong.push(`${k}: no field of ${w.resource.name} reads it back`);
      else if (!same(read(got), sent))
        wrong.push(`${k}: sent ${JSON.stringify(sent)}, read ${JSON.stringify(read(got))}`);
    }
    expect(wrong).toEqual([]);
  });
});

/** A string with no format or pattern (text(), clearable or optional): any short text is valid. */
function isPlainText(schema: unknown): boolean {
  let s = schema as { def?: { type: string; innerType?: unknown; checks?: unknown[] }; format?: unknown };
  while (s?.def && ['optional', 'nullable', 'default'].includes(s.def.type)) s = s.def.innerType as typeof s;
  if (s?.def?.type !== 'string' || s.format) return false;
  return !(s.def.checks ?? []).some((c: any) => c?._zod?.def?.check === 'string_format');
}

/** The object as GET answers it, with every group (detailed and every include). */
async function readBack(r: Resource, path: string, id: string, key: string): Promise<any> {
  const includes = ownIncludesOf(r);
  if (path.startsWith('/catalog/')) {
    const page = await app.get(`/v1${path}?response_format=detailed`, key);
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    return page.body.data.find((x: { id: string }) => x.id === id);
  }
  // Webhook subscriptions have one format: no groups to ask for.
  const q =
    path === '/webhooks'
      ? ''
      : `?response_format=detailed${includes.length ? `&include=${includes.join(',')}` : ''}`;
  const res = await app.get(`/v1${path}/${id}${q}`, key);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
}

/** How a body field reads back: the field of its name, or the join it names (`<join>_id` → `<join>.id`). */
function readerOf(r: Resource, k: string): ((got: any) => unknown) | undefined {
  const alias = Object.entries(INPUT_NAMED[r.kind] ?? {}).find(([, input]) => input === k)?.[0];
  const byProp = alias ? fieldsOf(r, alias)[0]?.[0] : undefined;
  const name = byProp ?? k;
  const field = r.fields[name] ?? r.fields[name.replace(/_id$/, '')];
  if (!field) return undefined;
  const fieldName = r.fields[name] ? name : name.replace(/_id$/, '');
  if (field.source.kind === 'join') return (g) => g[fieldName]?.id ?? null;
  return (g) => g[fieldName];
}

/** Equal, instants compared as instants and phones as numbers (the clinics here are Israeli). */
const same = (read: unknown, sent: unknown): boolean =>
  JSON.stringify(canonical(read)) === JSON.stringify(canonical(sent));

const canonical = (v: unknown): unknown => {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.entries(v)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, x]) => [k, canonical(x)]),
    );
  if (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(v)) return new Date(v).toISOString();
  if (typeof v === 'string' && /^\+?[\d\- ]{7,}$/.test(v)) return toE164(v, 'IL') ?? v;
  return v;
};
