import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  type Connection,
  GraphQLRequestError,
  shouldRetry,
  subscriptionClient,
} from '../examples/dashboard-client/src/client.ts';
import {
  bookAppointment,
  clinicEvents,
  dataId,
  newestEventId,
  patientsWithAppointments,
  runDashboard,
} from '../examples/dashboard-client/src/dashboard.ts';
import { APPOINTMENT_CREATED } from '../examples/dashboard-client/src/operations.ts';
import { compareTypedClient, filesOnDisk, generateTypedClient } from '../scripts/typed-client-files.ts';
import { fixtures } from './fixtures.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { until } from './ws-client.ts';

/**
 * The typed dashboard client of examples/dashboard-client (issue 27), run against a real app: its
 * typed operations answer what their types say, its booking books, and its `events` subscription
 * receives the booking's event. `npm run check` compiles it (scripts/typed-client.ts); this proves
 * it does what it says.
 */
let app: TestApp;
let connection: Connection;
let ids: { patient: string; branch: string; provider: string; type: string };
const clients: { dispose(): Promise<void> | void }[] = [];

beforeAll(async () => {
  app = await startTestApp();
  const c = await app.clinicWithKey('dental', [
    'patients:read',
    'patients:write',
    'appointments:read',
    'appointments:write',
    'catalog:read',
    'catalog:write',
    'webhooks:manage',
  ]);
  connection = { url: `${app.url}/graphql`, apiKey: c.key };
  const cat = await fixtures(app.orm, c.clinicId).catalog();
  ids = {
    branch: `br_${cat.branch.id}`,
    provider: `prv_${cat.provider.id}`,
    type: `apt_${cat.type.id}`,
    patient: '',
  };
  // Through the API, so the clinic has an event (patient.created) for the program's cursor.
  const p = await app.post(
    '/v1/patients',
    { first_name: 'Dana', last_name: 'Cohen', phone: '0501234567' },
    c.key,
  );
  expect(p.status, JSON.stringify(p.body)).toBe(201);
  ids.patient = p.body.data.id;
  // Monday to Friday, 09:00-17:00 UTC; the app's clock stands on Sunday 2026-11-01 10:00 UTC.
  const week = [1, 2, 3, 4, 5].map((weekday) => ({
    branch_id: ids.branch,
    weekday,
    start: '09:00',
    end: '17:00',
  }));
  const h = await app.send(
    'PUT',
    `/v1/catalog/providers/${ids.provider}/working_hours`,
    { data: week },
    c.key,
  );
  expect(h.status, JSON.stringify(h.body)).toBe(200);
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.dispose()));
});

const booking = (start: string) => ({
  patientId: ids.patient,
  branchId: ids.branch,
  providerId: ids.provider,
  typeId: ids.type,
  start,
});

describe('the typed dashboard client', () => {
  it('is generated from the served schema: its committed types are not stale (`npm run typed-client`)', async () => {
    const { wrongTypes } = compareTypedClient(await generateTypedClient(`${app.url}/graphql`), filesOnDisk());
    expect(wrongTypes, 'run `npm run typed-client` and commit examples/dashboard-client/src/gql').toEqual([]);
  });

  it('lists patients with their nested appointments, typed as the operation selects them', async () => {
    const booked = await bookAppointment(connection, booking('2026-11-02T09:00:00.000Z'));
    const patients = await patientsWithAppointments(connection, { patients: 5, appointments: 5 });
    // Checked by the compiler (`npm run check`), not at run time: the aliases are the fields' names.
    expectTypeOf(patients[0].firstName).toEqualTypeOf<string | null>();
    expectTypeOf(patients[0].id).toEqualTypeOf<string>();
    expect(patients).toEqual([
      {
        id: ids.patient,
        firstName: 'Dana',
        lastName: 'Cohen',
        phone: '0501234567',
        appointments: {
          edges: [
            {
              node: {
                id: booked.id,
                start: '2026-11-02T09:00:00.000Z',
                end: '2026-11-02T09:30:00.000Z',
                status: { name: 'Scheduled' },
                provider: { name: 'Dr. Levi' },
                type: { name: 'Check-up' },
                cancelledAt: null,
              },
            },
          ],
        },
      },
    ]);
  });

  it('books an appointment and answers it; a clash is a typed error carrying the REST code', async () => {
    const booked = await bookAppointment(connection, {
      ...booking('2026-11-03T10:00:00.000Z'),
      note: 'typed',
    });
    expect(booked).toEqual({
      id: expect.stringMatching(/^appt_\d+$/),
      start: '2026-11-03T10:00:00.000Z',
      end: '2026-11-03T10:30:00.000Z',
      patient: { id: ids.patient },
      status: { name: 'Scheduled' },
    });
    const clash = await bookAppointment(connection, booking('2026-11-03T10:15:00.000Z')).catch((e) => e);
    expect(clash).toBeInstanceOf(GraphQLRequestError);
    expect(clash.errors[0].extensions.code).toBe('conflict');
    expect(clash.message).toContain(booked.id);
  });

  it('the events subscription receives the booking as it is committed', async () => {
    const client = subscriptionClient(connection);
    clients.push(client);
    // No cursor: live events only, so the booking waits until the subscription is on the server.
    const events = clinicEvents(client, { types: [APPOINTMENT_CREATED] });
    const next = events.next();
    // Awaited below; a failure before that must not surface as an unhandled rejection.
    next.catch(() => {});
    await until(() => app.server.app.eventHub.size === 1);
    const booked = await bookAppointment(connection, booking('2026-11-04T11:00:00.000Z'));
    const result = await next;
    if (result.done) throw new Error('the subscription ended without an event');
    const event = result.value;
    // The payload is typed by the subscription's selection; `data` is the JSON scalar, unknown.
    expectTypeOf(event).toEqualTypeOf<{
      id: string;
      type: typeof APPOINTMENT_CREATED;
      createdAt: string;
      data: unknown;
    }>();
    expect(event).toMatchObject({ id: expect.stringMatching(/^evt_\d+$/), type: APPOINTMENT_CREATED });
    expect(dataId(event)).toBe(booked.id);
    expect(event.data).toMatchObject({ id: booked.id, start: '2026-11-04T11:00:00.000Z' });
    await events.return();
    await until(() => app.server.app.eventHub.size === 0);
  });

  it('the program: lists, books the first free slot, and prints events up to its booking', async () => {
    const before = await newestEventId(connection);
    expect(before).toMatch(/^evt_\d+$/);
    const lines: string[] = [];
    const run = await runDashboard(connection, {
      from: new Date('2026-11-01T10:00:00Z'),
      print: (l) => lines.push(l),
    });
    // Monday 09:00 went to the first test's booking.
    expect(run.booked).toMatchObject({ start: '2026-11-02T09:30:00.000Z', patient: { id: ids.patient } });
    // Subscribed after the newest event read before booking: the booking's event, nothing older.
    expect(run.events).toEqual([
      {
        id: expect.stringMatching(/^evt_\d+$/),
        type: APPOINTMENT_CREATED,
        createdAt: expect.any(String),
        data: expect.objectContaining({ id: run.booked!.id, start: '2026-11-02T09:30:00.000Z' }),
      },
    ]);
    const n = (id: string) => Number(id.slice('evt_'.length));
    expect(n(run.events[0].id)).toBeGreaterThan(n(before!));
    expect(lines[0]).toBe('1 patient(s):');
    expect(lines).toContain(`  ${ids.patient} Dana Cohen 0501234567`);
    expect(lines).toContain('    2026-11-02T09:00:00.000Z Check-up with Dr. Levi: Scheduled');
    expect(lines.at(-1)).toContain(`${APPOINTMENT_CREATED} at `);
    // The program leaves no subscription open behind it.
    await until(() => app.server.app.eventHub.size === 0 && app.server.subscriptions.size === 0);
  });

  it('the program on a clinic without any event yet (no cursor) still receives its booking', async () => {
    const c = await app.clinicWithKey(
      'dental',
      [
        'patients:read',
        'appointments:read',
        'appointments:write',
        'catalog:read',
        'catalog:write',
        'webhooks:manage',
      ],
      'no events yet',
    );
    const fx = fixtures(app.orm, c.clinicId);
    const cat = await fx.catalog();
    await fx.patient({ first: 'Noa', last: 'Levi' });
    // Working hours record no event (unlike a patient written through the API).
    const week = [{ branch_id: `br_${cat.branch.id}`, weekday: 1, start: '09:00', end: '17:00' }];
    const h = await app.send(
      'PUT',
      `/v1/catalog/providers/prv_${cat.provider.id}/working_hours`,
      { data: week },
      c.key,
    );
    expect(h.status, JSON.stringify(h.body)).toBe(200);
    const fresh = { url: connection.url, apiKey: c.key };
    expect(await newestEventId(fresh)).toBeNull();
    const run = await runDashboard(fresh, { from: new Date('2026-11-01T10:00:00Z'), print: () => {} });
    expect(run.booked).toMatchObject({ start: '2026-11-02T09:00:00.000Z' });
    expect(run.events.map((e) => [e.type, dataId(e)])).toEqual([[APPOINTMENT_CREATED, run.booked!.id]]);
  });

  it('a refused key (4403) is not retried: one connection attempt, the subscription ends with the close', async () => {
    // graphql-ws's default retries a 4403 five times over about half a minute (docs/events.md).
    const client = subscriptionClient({ ...connection, apiKey: 'cg_test_not-a-key' });
    clients.push(client);
    let attempts = 0;
    client.on('connecting', () => attempts++);
    const ended = await Promise.race([
      clinicEvents(client, {})
        .next()
        .then(
          () => 'an event',
          (e: unknown) => e,
        ),
      new Promise((resolve) => setTimeout(() => resolve('still retrying after 6 s'), 6000)),
    ]);
    expect(ended).toMatchObject({ code: 4403 });
    expect(attempts).toBe(1);
    // Other closes are retried as graphql-ws's default would; an error that is no close event is not.
    expect(shouldRetry({ code: 1006, reason: '' })).toBe(true);
    expect(shouldRetry({ code: 4403, reason: 'Forbidden' })).toBe(false);
    expect(shouldRetry(new Error('ECONNREFUSED'))).toBe(false);
  });
});
