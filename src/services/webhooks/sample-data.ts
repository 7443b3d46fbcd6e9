import {
  type ExampleRow,
  exampleClinic,
  exampleRecords,
  sampleEventTime,
  sampleId,
  sampleMoments,
} from '../../events/examples.ts';
import { EVENT_TYPES, type EventType } from '../../events/types.ts';
import { cached } from '../../lib/memo.ts';
import { Appointment } from '../appointments/appointment.resource.ts';
import { Call } from '../calls/call.resource.ts';
import { ChatPatient, type MatchedContext } from '../chat/matched-patients.ts';
import { Message } from '../chat/message.resource.ts';
import { Patient } from '../patients/patient.resource.ts';
import { Payment } from '../payments/payment.resource.ts';
import {
  CORE,
  everyGroupOf,
  fieldsIn,
  type Groups,
  type ReadPlan,
  type Resource,
  type Row,
  restGroups,
  type Shape,
  type Source,
  shapeOf,
  standaloneView,
} from '../resource.ts';
import { Treatment } from '../treatments/treatment.resource.ts';

/**
 * Sample events (POST /v1/webhooks/{id}/test, POST /v1/events, the OpenAPI `webhooks` examples,
 * docs/events.md's Samples): each type's `data` is an example record (src/events/examples.ts)
 * presented as the type's real events present their object, so a field added to a definition is
 * in every sample of its resource without an edit here.
 */

const DETAILED = restGroups(true, []);

/**
 * What each type's `data` is: the resource its operation presents and the groups it presents it
 * with (a write's `resource` and `groups`, src/services/writes.ts; chat's messageEvent, CORE).
 * test/webhook-every-type.test.ts holds every real event's data to the keys of its type's sample.
 */
export const eventData: Record<EventType, { resource: Resource; groups: Groups }> = {
  'patient.created': { resource: Patient, groups: DETAILED },
  'patient.updated': { resource: Patient, groups: DETAILED },
  // An animal is presented with everything its definition offers: its owner and species.
  'animal.created': { resource: Patient, groups: everyGroupOf(Patient) },
  'animal.updated': { resource: Patient, groups: everyGroupOf(Patient) },
  'appointment.created': { resource: Appointment, groups: DETAILED },
  'appointment.updated': { resource: Appointment, groups: DETAILED },
  'appointment.cancelled': { resource: Appointment, groups: DETAILED },
  'treatment.created': { resource: Treatment, groups: DETAILED },
  'treatment.updated': { resource: Treatment, groups: DETAILED },
  'treatment.cancelled': { resource: Treatment, groups: DETAILED },
  'payment.recorded': { resource: Payment, groups: DETAILED },
  'payment.cancelled': { resource: Payment, groups: DETAILED },
  'call.completed': { resource: Call, groups: DETAILED },
  'call.updated': { resource: Call, groups: DETAILED },
  'call.recording.available': { resource: Call, groups: DETAILED },
  'call.transcript.completed': { resource: Call, groups: DETAILED },
  'call.transcript.failed': { resource: Call, groups: DETAILED },
  // chat.message.failed's failure_reason is null in every event (messageEvent): the record has none.
  'chat.message.received': { resource: Message, groups: CORE },
  'chat.message.sent': { resource: Message, groups: CORE },
  'chat.message.delivered': { resource: Message, groups: CORE },
  'chat.message.read': { resource: Message, groups: CORE },
  'chat.message.failed': { resource: Message, groups: CORE },
};

const samples = new Map<EventType, Row>();

/** The `data` of `type`'s sample event, keys in the order the outbox's jsonb gives them back. */
export const eventSample = (type: EventType): Row => cached(samples, type, () => buildSample(type));

/** A sample's envelope as a delivery carries it (docs/events.md, the OpenAPI examples): ids by catalog order, naming no event. */
export const sampleEnvelope = (type: EventType) => ({
  id: `evt_${sampleId(EVENT_TYPES.indexOf(type) + 1)}`,
  type,
  created_at: sampleEventTime,
  data: eventSample(type),
});

function buildSample(type: EventType): Row {
  const { resource, groups } = eventData[type];
  const { record, changes } = sampleMoments[type];
  const where = `the ${record} example record (src/events/examples.ts), ${type}'s sample`;
  return presentExample(resource, groups, { ...exampleRecords[record], ...changes }, where);
}

/**
 * `example` as `resource`'s view of `groups` presents it, keys in jsonb order. Fails, saying
 * what to fill or fix in `where`, on a property no field reads, or a non-null field left null.
 */
export function presentExample(resource: Resource, groups: Groups, example: ExampleRow, where: string): Row {
  const problems = unknownProps(resource, example).map(
    (p) => `${where}: ${p} is a property no field of ${resource.name} reads; remove it or fix its name.`,
  );
  const view = standaloneView(resource, groups);
  let data: Row | undefined;
  if (!problems.length) {
    try {
      data = view.present(rowOf(example, view.read), presentContext());
      problems.push(...nullsOfNonNull(resource, groups, data, resource.name, where));
    } catch (e) {
      // A derivation that cannot take null (a call's end from its start and duration).
      const lacking = fieldsIn(resource, groups)
        .filter((name) => !resource.fields[name].nullable)
        .flatMap((name) => propsOf(resource.fields[name].source).filter((p) => example[p] == null));
      problems.push(
        `${where}: presenting it failed (${(e as Error).message}); fill ${[...new Set(lacking)].join(', ')}.`,
      );
    }
  }
  if (problems.length || !data) throw new Error(`Sample events:\n- ${problems.join('\n- ')}`);
  return jsonbOrder(data) as Row;
}

/** The row a lean read of `read` would answer: every property it reads, null when the example has none. */
function rowOf(example: ExampleRow, read: ReadPlan): Row {
  const row: Row = { ...example };
  for (const prop of read.fields) row[prop] ??= null;
  for (const [prop, columns] of Object.entries(read.joins)) {
    const nested = example[prop] as ExampleRow | null | undefined;
    row[prop] = nested == null ? null : Object.fromEntries(columns.map((c) => [c, null]));
    if (nested != null) Object.assign(row[prop], nested);
  }
  return row;
}

/** Messages show the patients whose phone is theirs: here, the patient example's. */
function presentContext(): MatchedContext {
  const patient = exampleRecords.patient;
  const view = standaloneView(ChatPatient, CORE);
  const shown = view.present(rowOf(patient, view.read), exampleClinic);
  return { ...exampleClinic, matched: new Map([[patient.phone, [shown]]]) };
}

function unknownProps(resource: Resource, example: ExampleRow): string[] {
  const known = new Set(['id', ...Object.values(resource.fields).flatMap((f) => propsOf(f.source))]);
  return Object.keys(example).filter((p) => !known.has(p));
}

/** The properties of its record a field's value comes from. */
const propsOf = (s: Source): readonly string[] =>
  s.kind === 'column' || s.kind === 'ref' || s.kind === 'join'
    ? [s.prop]
    : s.kind === 'key'
      ? [s.key]
      : (s.needs ?? ['id']);

/** Each field the definition declares non-null that came out null, with what to fill where. */
function nullsOfNonNull(shape: Shape, groups: Groups, out: Row, path: string, where: string): string[] {
  const problems: string[] = [];
  for (const name of fieldsIn(shape, groups)) {
    const field = shape.fields[name];
    const value = out[name];
    const nested = shapeOf(field.type);
    if (value == null) {
      if (field.nullable) continue;
      const props = propsOf(field.source).join(', ');
      problems.push(`${where}: ${path}.${name} is not nullable but came out null; fill ${props}.`);
    } else if (nested && typeof value === 'object') {
      const items: Row[] = Array.isArray(value) ? value : [value];
      items.forEach((item, i) => {
        const at = `${path}.${name}${Array.isArray(value) ? `[${i}]` : ''}`;
        problems.push(...nullsOfNonNull(nested, groups, item, at, where));
      });
    }
  }
  return problems;
}

/** PostgreSQL's jsonb order, which deliveries carry: shorter keys first, then by their bytes. */
function jsonbOrder(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(jsonbOrder);
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value).sort(
    (a, b) => Buffer.byteLength(a) - Buffer.byteLength(b) || Buffer.compare(Buffer.from(a), Buffer.from(b)),
  );
  return Object.fromEntries(keys.map((k) => [k, jsonbOrder((value as Row)[k])]));
}
