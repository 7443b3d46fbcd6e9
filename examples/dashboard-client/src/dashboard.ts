import { randomUUID } from 'node:crypto';
import type { Client } from 'graphql-ws';
import {
  type Connection,
  type ResultOf,
  request,
  subscribe,
  subscriptionClient,
  type VariablesOf,
} from './client.ts';
import {
  APPOINTMENT_CREATED,
  AppointmentTypes,
  BookAppointment,
  ClinicEvents,
  FreeSlots,
  NewestEvent,
  PatientsWithAppointments,
} from './operations.ts';

/** The types the program works with, all read off its operations (never written by hand). */
export type Patient = NonNullable<
  ResultOf<typeof PatientsWithAppointments>['patients']
>['edges'][number]['node'];
export type Booking = VariablesOf<typeof BookAppointment>['input'];
export type BookedAppointment = ResultOf<typeof BookAppointment>['createAppointment']['appointment'];
export type Slot = NonNullable<ResultOf<typeof FreeSlots>['availability']>[number];
export type ClinicEvent = ResultOf<typeof ClinicEvents>['events'];

/** The clinic's first patients, each with their newest appointments. */
export async function patientsWithAppointments(
  connection: Connection,
  counts: { patients: number; appointments: number } = { patients: 10, appointments: 3 },
): Promise<Patient[]> {
  const data = await request(connection, PatientsWithAppointments, counts);
  return data.patients?.edges.map((edge) => edge.node) ?? [];
}

/** Books an appointment; the idempotency key makes a retry of the same booking write nothing twice. */
export async function bookAppointment(connection: Connection, booking: Booking): Promise<BookedAppointment> {
  const data = await request(connection, BookAppointment, {
    input: { idempotencyKey: randomUUID(), ...booking },
  });
  return data.createAppointment.appointment;
}

/** The first free slot of the clinic's first appointment type in the `days` after `from`. */
export async function firstFreeSlot(
  connection: Connection,
  from: Date,
  days = 14,
): Promise<{ typeId: string; slot: Slot } | null> {
  const types = (await request(connection, AppointmentTypes, {})).appointmentTypes ?? [];
  const to = new Date(from.getTime() + days * 86_400_000);
  for (const type of types) {
    const { availability } = await request(connection, FreeSlots, {
      typeId: type.id,
      from: from.toISOString(),
      to: to.toISOString(),
    });
    const slot = availability?.[0];
    if (slot) return { typeId: type.id, slot };
  }
  return null;
}

/** The clinic's newest event id: a subscription started after it misses nothing that follows. */
export async function newestEventId(connection: Connection): Promise<string | null> {
  const data = await request(connection, NewestEvent, {});
  return data.events?.edges[0]?.node.id ?? null;
}

/** The clinic's events as they are committed; with `after`, those after it are replayed first. */
export async function* clinicEvents(
  client: Client,
  variables: VariablesOf<typeof ClinicEvents>,
): AsyncGenerator<ClinicEvent, void, undefined> {
  for await (const result of subscribe(client, ClinicEvents, variables)) yield result.events;
}

/** The id of an event's `data` (the REST resource the event is about). */
export function dataId(event: ClinicEvent): string | undefined {
  const { data } = event;
  return typeof data === 'object' && data !== null && 'id' in data && typeof data.id === 'string'
    ? data.id
    : undefined;
}

/**
 * The dashboard: lists patients with their appointments, books the first free slot for the first
 * patient, and prints the clinic's events until the booking's own APPOINTMENT_CREATED arrives.
 *
 * The subscription is on before the booking is sent. It starts after the newest event read
 * before, so with a cursor the booking's event is replayed if the subscription reached the server
 * late. A clinic without any event has no cursor (`after` takes an event id): there the booking
 * waits for the socket's acknowledgement, after which the subscribe message is already on its way,
 * ahead of the booking's request, its commit and the notification that carries its event.
 */
export async function runDashboard(
  connection: Connection,
  opts: { from?: Date; print?: (line: string) => void; eventTimeoutMs?: number } = {},
): Promise<{ patients: Patient[]; booked: BookedAppointment | null; events: ClinicEvent[] }> {
  const print = opts.print ?? console.log;
  const patients = await patientsWithAppointments(connection);
  print(`${patients.length} patient(s):`);
  for (const p of patients) {
    print(`  ${p.id} ${[p.firstName, p.lastName].filter(Boolean).join(' ')} ${p.phone ?? ''}`.trimEnd());
    for (const { node: a } of p.appointments?.edges ?? [])
      print(
        `    ${a.start} ${a.type?.name ?? 'appointment'} with ${a.provider?.name ?? 'anyone'}: ${a.cancelledAt ? 'cancelled' : (a.status?.name ?? 'no status')}`,
      );
  }
  const patient = patients[0];
  const free = patient ? await firstFreeSlot(connection, opts.from ?? new Date()) : null;
  if (!patient || !free) {
    print(patient ? 'No free slot in the next 14 days: nothing booked.' : 'No patient: nothing booked.');
    return { patients, booked: null, events: [] };
  }

  const after = await newestEventId(connection);
  const client = subscriptionClient(connection);
  // Disposing the client ends the subscription: the program never waits for ever.
  const timeoutMs = opts.eventTimeoutMs ?? 10_000;
  const timer = setTimeout(() => void client.dispose(), timeoutMs);
  const events: ClinicEvent[] = [];
  try {
    const acknowledged = new Promise<void>((resolve) => {
      const off = client.on('connected', () => {
        off();
        resolve();
      });
    });
    const stream = clinicEvents(client, after ? { after } : {});
    // The first next() connects and subscribes; a failure to connect surfaces when it is awaited.
    let next = stream.next();
    await Promise.race([
      acknowledged,
      next.then(
        () => {},
        () => {},
      ),
    ]);
    const booked = await bookAppointment(connection, {
      patientId: patient.id,
      branchId: free.slot.branchId,
      providerId: free.slot.providerId,
      typeId: free.typeId,
      start: free.slot.start,
      note: 'Booked from the dashboard example',
    });
    print(
      `Booked ${booked.id} for ${booked.patient.id} at ${booked.start} (${booked.status?.name ?? 'no status'}).`,
    );
    for (;;) {
      const r = await next.catch((err: unknown) => {
        throw new Error(`The events subscription failed: ${reasonOf(err)}`);
      });
      if (r.done) throw new Error(`The booking's event did not arrive within ${timeoutMs} ms.`);
      const event = r.value;
      events.push(event);
      print(`Event ${event.id} ${event.type} at ${event.createdAt}: ${dataId(event) ?? ''}`.trimEnd());
      if (event.type === APPOINTMENT_CREATED && dataId(event) === booked.id) {
        await stream.return();
        return { patients, booked, events };
      }
      next = stream.next();
    }
  } finally {
    clearTimeout(timer);
    await client.dispose();
  }
}

/** graphql-ws ends a subscription with a list of GraphQL errors, an Error, or the socket's close event. */
function reasonOf(err: unknown): string {
  if (Array.isArray(err)) return err.map((e) => (e as { message?: string }).message ?? String(e)).join('; ');
  if (err instanceof Error) return err.message;
  const close = err as { code?: number; reason?: string };
  return close.code ? `socket closed (${close.code}${close.reason ? ` ${close.reason}` : ''})` : String(err);
}
