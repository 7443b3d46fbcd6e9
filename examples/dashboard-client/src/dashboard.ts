import { randomUUID } from 'node:crypto';
import {
  AppointmentTypesDocument,
  type ClinicEvent,
  type Connection,
  createRestClient,
  createSubscriptionClient,
  FreeSlotsDocument,
  NewestEventDocument,
  PatientsPageDocument,
  type PatientsPageQuery,
  type paths,
  type RestClient,
  request,
  type Schemas,
} from '@clinic-gateway/sdk';

/** Where the service is, the clinic's key, and a WebSocket class where Node has none (Node 20). */
export interface Service {
  /** e.g. http://127.0.0.1:4000; GraphQL is at /graphql, REST at /v1. */
  baseUrl: string;
  apiKey: string;
  webSocketImpl?: unknown;
}

export type Patient = NonNullable<PatientsPageQuery['patients']>['edges'][number]['node'];
export type Appointment = Schemas['Appointment'];
/** POST /v1/appointments' body, as openapi.json declares it. */
export type Booking = NonNullable<
  paths['/v1/appointments']['post']['requestBody']
>['content']['application/json'];

/** Every patient, page after page: each page's endCursor is the next one's `after`. */
export async function allPatients(graphql: Connection, pageSize = 10): Promise<Patient[]> {
  const patients: Patient[] = [];
  let after: string | null = null;
  for (;;) {
    const { patients: page }: PatientsPageQuery = await request(graphql, PatientsPageDocument, {
      first: pageSize,
      after,
    });
    patients.push(...(page?.edges.map((edge) => edge.node) ?? []));
    if (!page?.pageInfo.hasNextPage) return patients;
    after = page.pageInfo.endCursor;
  }
}

/** The first free slot of the clinic's appointment types in the `days` after `from`. */
export async function firstFreeSlot(graphql: Connection, from: Date, days = 14) {
  const { appointmentTypes } = await request(graphql, AppointmentTypesDocument);
  const to = new Date(from.getTime() + days * 86_400_000);
  for (const type of appointmentTypes ?? []) {
    const { availability } = await request(graphql, FreeSlotsDocument, {
      typeId: type.id,
      from: from.toISOString(),
      to: to.toISOString(),
    });
    const slot = availability?.[0];
    if (slot) return { typeId: type.id, ...slot };
  }
  return null;
}

/** Books through REST; the idempotency key makes a retry of the same booking write nothing twice. */
async function book(rest: RestClient, booking: Booking): Promise<Appointment> {
  const { data, error } = await rest.POST('/v1/appointments', {
    params: { header: { 'Idempotency-Key': randomUUID() } },
    body: booking,
  });
  if (error) throw new Error(`The booking was refused: ${error.error.code}: ${error.error.message}`);
  return data.data;
}

/** The id of an event's `data` (the REST resource the event is about). */
export function dataId(event: ClinicEvent): string | undefined {
  const { data } = event;
  return typeof data === 'object' && data !== null && 'id' in data && typeof data.id === 'string'
    ? data.id
    : undefined;
}

/**
 * The dashboard: lists every patient with their appointments, books the first free slot for the
 * first patient through REST, and prints the clinic's events until the booking's own arrives.
 *
 * The subscription starts after the newest event read before booking, so the booking's event is
 * replayed if the subscription reached the server late. A clinic without any event has no cursor:
 * there the booking waits for the socket's acknowledgement, after which the subscribe message is
 * already ahead of the booking's request.
 */
export async function runDashboard(
  service: Service,
  opts: { from?: Date; print?: (line: string) => void; eventTimeoutMs?: number } = {},
): Promise<{ patients: Patient[]; booked: Appointment | null; events: ClinicEvent[] }> {
  const print = opts.print ?? console.log;
  const graphql: Connection = { url: `${service.baseUrl}/graphql`, apiKey: service.apiKey };
  const rest = createRestClient({ baseUrl: service.baseUrl, apiKey: service.apiKey });

  const patients = await allPatients(graphql);
  print(`${patients.length} patient(s):`);
  for (const p of patients) {
    print(`  ${p.id} ${[p.firstName, p.lastName].filter(Boolean).join(' ')} ${p.phone ?? ''}`.trimEnd());
    for (const { node: a } of p.appointments?.edges ?? [])
      print(
        `    ${a.start} ${a.type?.name ?? 'appointment'} with ${a.provider?.name ?? 'anyone'}: ${a.cancelledAt ? 'cancelled' : (a.status?.name ?? 'no status')}`,
      );
  }
  const patient = patients[0];
  const free = patient ? await firstFreeSlot(graphql, opts.from ?? new Date()) : null;
  if (!patient || !free) {
    print(patient ? 'No free slot in the next 14 days: nothing booked.' : 'No patient: nothing booked.');
    return { patients, booked: null, events: [] };
  }

  const newest = (await request(graphql, NewestEventDocument)).events?.edges[0]?.node.id ?? null;
  const client = createSubscriptionClient({
    url: graphql.url,
    apiKey: service.apiKey,
    ...(service.webSocketImpl ? { webSocketImpl: service.webSocketImpl } : {}),
  });
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
    const stream = client.events({ types: ['APPOINTMENT_CREATED'], after: newest });
    // The first next() connects and subscribes; a failure to connect surfaces when it is awaited.
    let next = stream.next();
    await Promise.race([acknowledged, next.then(() => {}).catch(() => {})]);
    const booked = await book(rest, {
      patient_id: patient.id,
      branch_id: free.branchId,
      provider_id: free.providerId,
      type_id: free.typeId,
      start: free.start,
      note: 'Booked from the dashboard example',
    });
    print(`Booked ${booked.id} for ${booked.patient.id} at ${booked.start}.`);
    for (;;) {
      const r = await next;
      if (r.done) throw new Error(`The booking's event did not arrive within ${timeoutMs} ms.`);
      events.push(r.value);
      print(
        `Event ${r.value.id} ${r.value.type} at ${r.value.createdAt}: ${dataId(r.value) ?? ''}`.trimEnd(),
      );
      if (dataId(r.value) === booked.id) {
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
