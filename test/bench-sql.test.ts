import { beforeAll, expect, it } from 'vitest';
import { bookingSql, sharedBookingStatements } from '../bench/booking-sql.ts';
import { chatSql } from '../bench/chat-sql.ts';
import { fixtures } from './fixtures.ts';
import { startTestApp, type TestApp } from './helpers.ts';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ keyCacheTtlMs: 60_000 });
});

const statements = (queries: string[]) =>
  queries.map((q) => q.replace(/^\[query\] /, '').replace(/ \[took .*$/s, ''));

/** bench/raw-server.ts runs bench/chat-sql.ts: the statements must be the app's, to the byte. */
it("the raw baseline's chat statements are the ones the app runs", async () => {
  const c = await app.clinicWithKey('dental', ['chat:read']);
  await fixtures(app.orm, c.clinicId).chat('050-111-2222');
  const ran = async (path: string) => {
    await app.get(path, c.key);
    app.queries.length = 0;
    expect((await app.get(path, c.key)).status).toBe(200);
    return statements(app.queries);
  };
  expect(await ran('/v1/chat/messages?limit=25')).toEqual([chatSql.messages, chatSql.patientsByPhone]);
  expect(await ran('/v1/chat/messages?limit=25&updated_since=2020-01-01')).toEqual([
    chatSql.messagesSync,
    chatSql.patientsByPhone,
  ]);
  expect(await ran('/v1/chat/conversations?limit=25')).toEqual([
    chatSql.conversations,
    chatSql.patientsByPhone,
  ]);
});

/**
 * The raw baseline's booking (bench/booking-sql.ts) runs the app's statements for the lock, the
 * overlap look, both inserts and the read of the detailed appointment, in the app's order, and
 * the app writes nothing more: a write the app adds (or a statement it changes) must reach the
 * raw server too, or the booking's ratio compares unequal work.
 */
it("the raw baseline's booking statements are the ones the app runs", async () => {
  const c = await app.clinicWithKey('veterinary', ['appointments:write']);
  const fx = fixtures(app.orm, c.clinicId);
  const cat = await fx.catalog();
  const patient = await fx.patient({ first: 'Rex', last: 'Cohen', phone: '050-111-2222' });
  const book = (hour: number) =>
    app.post(
      '/v1/appointments',
      {
        patient_id: `pat_${patient.id}`,
        branch_id: `br_${cat.branch.id}`,
        provider_id: `prv_${cat.provider.id}`,
        type_id: `apt_${cat.type.id}`,
        start: new Date(Date.UTC(2030, 0, 1, hour)).toISOString(),
        note: 'bench booking',
      },
      c.key,
    );
  expect((await book(9)).status).toBe(201);
  app.queries.length = 0;
  expect((await book(10)).status).toBe(201);
  const ran = statements(app.queries);
  // A column added to Appointment changes the app's INSERT and its read, which the raw server
  // runs from bench/pins/ (without the ORM): `npm run bench:pins` writes them again.
  const insert = ran.find((q) => q.startsWith('insert into "appointment"'));
  const read = ran.find((q) => q.startsWith('select "e"."id"') && q.includes('from "appointment"'));
  await expect(insert, 'the booking INSERT changed: run `npm run bench:pins`').toMatchFileSnapshot(
    '../bench/pins/insert-appointment.sql',
  );
  await expect(read, 'the booking read changed: run `npm run bench:pins`').toMatchFileSnapshot(
    '../bench/pins/appointment-detailed.sql',
  );
  // The whole request, statement by statement: nothing the app runs is left out of the raw one
  // (the two pins as the snapshots above hold them, so `npm run bench:pins` passes in one run).
  const pinned = (q: string) =>
    q === bookingSql.insertAppointment ? insert : q === bookingSql.detailed ? read : q;
  expect(
    ran,
    'the raw booking runs other statements than the app (bench/booking-sql.ts, sharedBookingStatements)',
  ).toEqual(['begin', ...sharedBookingStatements.map(pinned), 'commit']);
  expect(ran.filter((q) => /^(insert|update|delete|with)\b/i.test(q))).toEqual([
    insert,
    bookingSql.insertEvent,
  ]);
});
