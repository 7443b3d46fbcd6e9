import { type GraphQLObjectType, getNamedType, Kind, parse } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { readScopes } from '../src/auth/scopes.ts';
import { entityNamed } from '../src/entities/index.ts';
import { toId } from '../src/lib/ids.ts';
import { camelOf } from '../src/lib/names.ts';
import { matchRoute, restRoutes } from '../src/rest/routes.ts';
import { schemas } from '../src/schema/index.ts';
import { Appointment } from '../src/services/appointments/appointment.resource.ts';
import { AvailableSlot } from '../src/services/availability/availability.ts';
import { WorkingInterval } from '../src/services/availability/working-hours.ts';
import { CallRecordingLink } from '../src/services/calls/calls.ts';
import { catalogLists } from '../src/services/catalog/catalog.ts';
import { Conversation } from '../src/services/chat/conversation.resource.ts';
import { MediaLink } from '../src/services/chat/media.ts';
import { Message } from '../src/services/chat/message.resource.ts';
import { Template } from '../src/services/chat/template.resource.ts';
import { EventEnvelope } from '../src/services/events/event.resource.ts';
import { Patient } from '../src/services/patients/patient.resource.ts';
import { Payment } from '../src/services/payments/payment.resource.ts';
import {
  allShapes,
  type Field,
  fieldsIn,
  type Groups,
  includesOf,
  type Resource,
  type Row,
  restGroups,
  type Shape,
  shapeOf,
} from '../src/services/resource.ts';
import { Treatment } from '../src/services/treatments/treatment.resource.ts';
import { WebhookDelivery } from '../src/services/webhooks/delivery.resource.ts';
import { WebhookSubscription } from '../src/services/webhooks/webhook.resource.ts';
import { dentalFixtures, eventFixtures, fullFixtures, webhookFixtures } from './full-fixtures.ts';
import { graphqlOf, restOf } from './graphql-form.ts';
import { selectionOf, startTestApp, type TestApp } from './helpers.ts';

/**
 * Every resource answers the same JSON in GraphQL (every field selected) as in REST
 * (response_format=detailed and every include), at a veterinary and at a dental clinic, on
 * fixtures (test/full-fixtures.ts) where every nullable field has a value in some row and is null
 * in another. Everything is driven by the resource definitions: the GraphQL selections are built
 * from them, the REST parameters come from their groups, and the last tests walk them (and the
 * route table and the GraphQL schema) to check that every route and root field was compared and
 * every field, at every place it is embedded, was seen with a value, seen null, and told apart
 * from its neighbours. So a new field, shape, route or root field fails here until it is compared
 * and has fixture values, without anyone editing this file.
 *
 * The coverage tests read what the comparisons before them recorded: run the file as a whole.
 */
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ limits: { graphqlMaxCost: 10_000_000, graphqlMaxDepth: 50 } });
});

// ---------- what the REST answers held ----------

interface Seen {
  value: boolean;
  null: boolean;
}
/** By place in a resource: `Appointment.patient.owner.email`. */
const byPath = new Map<string, Seen>();
/** By shape, wherever it was embedded. */
const byShape = new Map<Shape, Map<string, Seen>>();
/** Every object returned at a place, to tell its fields apart. */
const objectsAt = new Map<string, { shape: Shape; objects: Row[] }>();

function mark(seen: Map<string, Seen>, key: string, v: unknown) {
  let s = seen.get(key);
  if (!s) {
    s = { value: false, null: false };
    seen.set(key, s);
  }
  if (v == null) s.null = true;
  else s.value = true;
}

/** Records a REST answer of every group: each object has every field of its shape. */
function record(path: string, shape: Shape, value: unknown): void {
  if (value == null) return;
  if (Array.isArray(value)) {
    for (const v of value) record(path, shape, v);
    return;
  }
  const obj = value as Row;
  expect(Object.keys(obj).sort(), path).toEqual(Object.keys(shape.fields).sort());
  let place = objectsAt.get(path);
  if (!place) {
    place = { shape, objects: [] };
    objectsAt.set(path, place);
  }
  place.objects.push(obj);
  let fields = byShape.get(shape);
  if (!fields) {
    fields = new Map();
    byShape.set(shape, fields);
  }
  for (const [name, field] of Object.entries(shape.fields)) {
    mark(fields, name, obj[name]);
    mark(byPath, `${path}.${name}`, obj[name]);
    const inner = shapeOf(field.type);
    if (inner) record(`${path}.${name}`, inner, obj[name]);
  }
}

/** Every place of a resource's fields, nested shapes included, from the definition alone. */
function placesOf(shape: Shape, path: string, depth = 0): { path: string; field: Field }[] {
  if (depth > 5) throw new Error(`${path}: shapes nested too deep (a cycle?)`);
  return Object.entries(shape.fields).flatMap(([name, field]) => {
    const inner = shapeOf(field.type);
    const here = { path: `${path}.${name}`, field };
    return inner ? [here, ...placesOf(inner, here.path, depth + 1)] : [here];
  });
}

// ---------- requests ----------

const routesHit = new Set<string>();
const rootFieldsAsked = new Set<string>();

async function rest(key: string, path: string) {
  const r = await app.get(path, key);
  expect(r.status, `${path}: ${JSON.stringify(r.body)}`).toBe(200);
  const { route } = matchRoute('GET', path.replace(/^\/v1/, '').replace(/\?.*$/, ''));
  if (route) routesHit.add(route.field);
  return r.body;
}

async function gql(key: string, query: string) {
  const r = await app.gql(query, {}, key);
  for (const def of parse(query).definitions)
    if (def.kind === Kind.OPERATION_DEFINITION)
      for (const sel of def.selectionSet.selections)
        if (sel.kind === Kind.FIELD) rootFieldsAsked.add(sel.name.value);
  expect(r.body.errors, query).toBeUndefined();
  return r.body.data;
}

// ---------- REST parameters from the definitions' groups ----------

function hasDetailed(shape: Shape, seen = new Set<Shape>()): boolean {
  if (seen.has(shape)) return false;
  seen.add(shape);
  return Object.values(shape.fields).some((f) => {
    const inner = shapeOf(f.type);
    return f.group === 'detailed' || (inner !== undefined && hasDetailed(inner, seen));
  });
}

interface Variant {
  query: string;
  active: Groups;
}

/** Every combination of response_format=detailed and the includes a resource offers; the full one last. */
function variantsOf(resource: Resource): Variant[] {
  const formats = hasDetailed(resource) ? [false, true] : [false];
  const includes = includesOf(resource);
  const subsets: string[][] = [[]];
  for (const i of includes) subsets.push(...subsets.map((s) => [...s, i]));
  return formats.flatMap((detailed) =>
    subsets.map((include) => ({
      query: [
        ...(detailed ? ['response_format=detailed'] : []),
        ...(include.length ? [`include=${include.join(',')}`] : []),
      ].join('&'),
      active: restGroups(detailed, include),
    })),
  );
}

const everyGroup = (resource: Resource): Variant => variantsOf(resource).at(-1) as Variant;
const withQuery = (path: string, ...params: string[]) => {
  const q = params.filter(Boolean).join('&');
  return q ? `${path}?${q}` : path;
};

/** A GraphQL answer (every field) less the fields a REST request of `active` groups leaves out. */
function project(value: unknown, shape: Shape, active: Groups): unknown {
  if (value == null) return value;
  if (Array.isArray(value)) return value.map((v) => project(v, shape, active));
  const obj = value as Row;
  return Object.fromEntries(
    fieldsIn(shape, active).map((name) => {
      const inner = shapeOf(shape.fields[name].type);
      return [name, inner ? project(obj[name], inner, active) : obj[name]];
    }),
  );
}

// ---------- GraphQL selections from the definitions ----------

const records = [
  { field: 'appointments', resource: Appointment },
  { field: 'treatments', resource: Treatment },
  { field: 'payments', resource: Payment },
] as const;

const pageInfo = 'pageInfo { hasNextPage }';
/** Every Patient field, and every field of each of its record connections. */
const patientSelection = `${selectionOf(Patient).slice(0, -1)}${records
  .map((r) => `${r.field}(first: 100) { ${pageInfo} edges { node ${selectionOf(r.resource)} } }`)
  .join(' ')} }`;

const nodes = (connection: any): Row[] => connection.edges.map((e: any) => e.node);
const withoutRecords = (p: Row): Row =>
  Object.fromEntries(Object.entries(p).filter(([k]) => !records.some((r) => r.field === k)));

// ---------- the comparisons ----------

const clinics = [
  { kind: 'veterinary', rows: fullFixtures },
  { kind: 'dental', rows: dentalFixtures },
] as const;

for (const clinic of clinics) {
  describe(`GraphQL and REST answer the same resources at a ${clinic.kind} clinic`, () => {
    let key: string;
    let ids: string[];
    let clinicId: number;

    beforeAll(async () => {
      const c = await app.clinicWithKey(clinic.kind, readScopes);
      key = c.key;
      clinicId = c.clinicId;
      ids = (await clinic.rows(app.orm, c.clinicId)).patients;
    });

    const listPatients = async () => {
      const data = await gql(
        key,
        `{ patients(first: 100) { ${pageInfo} edges { node ${patientSelection} } } }`,
      );
      expect(data.patients.pageInfo.hasNextPage).toBe(false);
      const patients = nodes(data.patients);
      expect(patients.map((p) => p.id).sort()).toEqual([...ids].sort());
      for (const p of patients) for (const r of records) expect(p[r.field].pageInfo.hasNextPage).toBe(false);
      return patients;
    };

    it('patients(first:) with their appointments, treatments and payments = GET /v1/patients and each patient’s lists', async () => {
      const patients = await listPatients();
      const listed = await rest(key, withQuery('/v1/patients', 'limit=100', everyGroup(Patient).query));
      expect(listed.next_cursor).toBeNull();
      record('Patient', Patient, listed.data);
      expect(patients.map(withoutRecords)).toEqual(graphqlOf(listed.data, Patient));

      for (const r of records) {
        let count = 0;
        for (const p of patients) {
          const path = withQuery(
            `/v1/patients/${p.id}/${r.field}`,
            'limit=100',
            everyGroup(r.resource).query,
          );
          const page = await rest(key, path);
          expect(page.next_cursor).toBeNull();
          record(r.resource.name, r.resource, page.data);
          expect(nodes(p[r.field]), path).toEqual(graphqlOf(page.data, r.resource));
          count += page.data.length;
        }
        expect(count, r.field).toBeGreaterThan(0);
      }
    });

    it('patient(id:) and node(id:), with their records = GET /v1/patients/{id} and its lists', async () => {
      for (const id of ids) {
        const one = await rest(key, withQuery(`/v1/patients/${id}`, everyGroup(Patient).query));
        record('Patient', Patient, one.data);
        const data = await gql(
          key,
          `{ patient(id: "${id}") ${patientSelection} node(id: "${id}") { ... on Patient ${patientSelection} } }`,
        );
        expect(withoutRecords(data.patient)).toEqual(graphqlOf(one.data, Patient));
        expect(data.node).toEqual(data.patient);
        for (const r of records) {
          const path = withQuery(`/v1/patients/${id}/${r.field}`, 'limit=100', everyGroup(r.resource).query);
          expect(nodes(data.patient[r.field]), path).toEqual(
            graphqlOf((await rest(key, path)).data, r.resource),
          );
        }
      }
    });

    it('REST with fewer groups (concise, some includes) = the GraphQL answer less those fields', async () => {
      const patients = await listPatients();
      // In REST's names (restOf: the mapping inverted, as strictly), to project REST's groups.
      const full = restOf(patients.map(withoutRecords), Patient);
      for (const v of variantsOf(Patient)) {
        const listed = await rest(key, withQuery('/v1/patients', 'limit=100', v.query));
        expect(listed.data, v.query).toEqual(project(full, Patient, v.active));
        for (const p of full) {
          const one = await rest(key, withQuery(`/v1/patients/${p.id}`, v.query));
          expect(one.data, `${p.id} ${v.query}`).toEqual(project(p, Patient, v.active));
        }
      }
      for (const r of records)
        for (const v of variantsOf(r.resource))
          for (const p of patients) {
            const path = withQuery(`/v1/patients/${p.id}/${r.field}`, 'limit=100', v.query);
            expect((await rest(key, path)).data, path).toEqual(
              project(restOf(nodes(p[r.field]), r.resource), r.resource, v.active),
            );
          }
    });

    it('the chat inbox: conversations, messages and templates = their GET routes', async () => {
      const conv = selectionOf(Conversation);
      const msg = selectionOf(Message);
      const connection = (sel: string) => `(first: 100) { ${pageInfo} edges { node ${sel} } }`;
      const data = await gql(key, `{ conversations${connection(conv)} messages${connection(msg)} }`);
      const conversations = await rest(key, '/v1/chat/conversations?limit=100');
      record('Conversation', Conversation, conversations.data);
      expect(nodes(data.conversations)).toEqual(graphqlOf(conversations.data, Conversation));
      const messages = await rest(key, '/v1/chat/messages?limit=100');
      record('Message', Message, messages.data);
      expect(nodes(data.messages)).toEqual(graphqlOf(messages.data, Message));
      if (clinic.kind === 'veterinary') expect(messages.data.length).toBeGreaterThan(0);

      // The sync order holds the same records.
      const synced = await rest(key, '/v1/chat/conversations?limit=100&updated_since=2000-01-01');
      const byId = (a: Row, b: Row) => a.id.localeCompare(b.id);
      expect([...synced.data].sort(byId)).toEqual([...conversations.data].sort(byId));

      for (const c of conversations.data) {
        const one = await rest(key, `/v1/chat/conversations/${c.id}`);
        expect(one.data).toEqual(c);
        const own = await rest(key, `/v1/chat/conversations/${c.id}/messages?limit=100`);
        const g = await gql(
          key,
          `{ conversation(id: "${c.id}") { id messages${connection(msg)} } node(id: "${c.id}") { ... on Conversation ${conv} } }`,
        );
        expect(nodes(g.conversation.messages)).toEqual(graphqlOf(own.data, Message));
        expect(g.node).toEqual(graphqlOf(c, Conversation));
      }
      for (const m of messages.data) {
        const one = await rest(key, `/v1/chat/messages/${m.id}`);
        expect(one.data).toEqual(m);
        if (m.media.available) {
          const link = await rest(key, `/v1/chat/messages/${m.id}/media`);
          record('MediaLink', MediaLink, link.data);
          const g = await gql(key, `{ message(id: "${m.id}") { mediaLink ${selectionOf(MediaLink)} } }`);
          expect(g.message.mediaLink).toEqual(graphqlOf(link.data, MediaLink));
        }
        const g = await gql(
          key,
          `{ message(id: "${m.id}") ${msg} node(id: "${m.id}") { ... on Message ${msg} } }`,
        );
        expect(g.message).toEqual(graphqlOf(m, Message));
        expect(g.node).toEqual(graphqlOf(m, Message));
      }
      for (const id of ids) {
        const own = await rest(key, `/v1/patients/${id}/chat/messages?limit=100`);
        const g = await gql(
          key,
          `{ patient(id: "${id}") { chatMessages${connection(msg)} chatConversations${connection(conv)} } }`,
        );
        expect(nodes(g.patient.chatMessages)).toEqual(graphqlOf(own.data, Message));
        const phone = (await rest(key, `/v1/patients/${id}`)).data.phone;
        expect(nodes(g.patient.chatConversations)).toEqual(
          graphqlOf(
            phone ? conversations.data.filter((c: Row) => c.patient_phone === phone) : [],
            Conversation,
          ),
        );
      }

      const templates = await rest(key, '/v1/chat/templates');
      record('Template', Template, templates.data);
      expect((await gql(key, `{ templates ${selectionOf(Template)} }`)).templates).toEqual(
        graphqlOf(templates.data, Template),
      );
    });

    it('the top-level record lists and their objects = their GraphQL connections and node(id:)', async () => {
      const query = schemas().publicSchema.getQueryType()?.getFields() ?? {};
      const lists = restRoutes.filter(
        (r) =>
          r.method === 'GET' &&
          !r.path.includes(':id') &&
          !['Patients', 'Chat', 'Catalog', 'Events', 'Availability', 'Webhooks'].includes(r.tag),
      );
      for (const route of lists) {
        const plural = route.path.slice(1);
        const probe = await app.get(`/v1${route.path}?limit=1`, key);
        // A list of the other kind of clinic (animals and clients at veterinary ones only).
        if (probe.status === 404) continue;
        const edges = (getNamedType(query[plural]?.type) as GraphQLObjectType).getFields().edges;
        const typeName = getNamedType(
          (getNamedType(edges.type) as GraphQLObjectType).getFields().node.type,
        ).name;
        const resource = allShapes().find((x) => x.name === typeName) as Resource;
        const active = restGroups(true, []);
        const body = await rest(key, `/v1${route.path}?limit=100&response_format=detailed`);
        expect(body.next_cursor).toBeNull();
        const data = await gql(
          key,
          `{ ${plural}(first: 100) { ${pageInfo} edges { node ${selectionOf(resource)} } } }`,
        );
        // GraphQL answers every field (REST leaves the patient's include groups out here): recorded
        // in REST's names through the inverted mapping, which refuses any name it does not map.
        const answered = restOf(nodes(data[plural]), resource);
        record(resource.name, resource, answered);
        expect(project(answered, resource, active), plural).toEqual(body.data);
        for (const item of body.data) {
          const one = await rest(key, `/v1${route.path}/${item.id}?response_format=detailed`);
          expect(one.data).toEqual(item);
          const n = await gql(
            key,
            `{ node(id: "${item.id}") { ... on ${typeName} ${selectionOf(resource)} } }`,
          );
          expect(project(restOf(n.node, resource), resource, active)).toEqual(item);
        }
      }
    });

    it("a call's recording: GET /v1/calls/{id}/recording = recordingLink on the Call", async () => {
      const calls = (await rest(key, '/v1/calls?limit=100')).data.filter((c: Row) => c.recording.available);
      expect(calls.length).toBeGreaterThan(0);
      const selection = selectionOf(CallRecordingLink);
      for (const c of calls) {
        const link = await rest(key, `/v1/calls/${c.id}/recording`);
        record(CallRecordingLink.name, CallRecordingLink, link.data);
        const g = await gql(key, `{ node(id: "${c.id}") { ... on Call { recordingLink ${selection} } } }`);
        expect(g.node.recordingLink).toEqual(graphqlOf(link.data, CallRecordingLink));
      }
    });

    it('the events: GET /v1/events and /v1/events/{id} = events(first:) and node(id:)', async () => {
      await eventFixtures(app.orm, clinicId, ids[0]);
      const events = await app.key(clinicId, ['webhooks:manage', 'chat:read']);
      const selection = selectionOf(EventEnvelope);
      const body = await rest(events, '/v1/events?limit=100');
      expect(body.data).toHaveLength(2);
      record(EventEnvelope.name, EventEnvelope, body.data);
      const data = await gql(events, `{ events(first: 100) { ${pageInfo} edges { node ${selection} } } }`);
      expect(nodes(data.events)).toEqual(graphqlOf(body.data, EventEnvelope));
      for (const item of body.data) {
        expect((await rest(events, `/v1/events/${item.id}`)).data).toEqual(item);
        const n = await gql(events, `{ node(id: "${item.id}") { ... on Event ${selection} } }`);
        expect(n.node).toEqual(graphqlOf(item, EventEnvelope));
      }
    });

    it('webhook subscriptions: GET /v1/webhooks and /v1/webhooks/{id} = webhooks(first:) and node(id:)', async () => {
      await webhookFixtures(app.orm, clinicId);
      // chat:read: a fixture receives every type, out of sight without it (docs/events.md, One visibility rule).
      const hooks = await app.key(clinicId, ['webhooks:manage', 'chat:read']);
      const selection = selectionOf(WebhookSubscription);
      const body = await rest(hooks, '/v1/webhooks?limit=100');
      // The deleted one is not shown.
      expect(body.data).toHaveLength(2);
      record(WebhookSubscription.name, WebhookSubscription, body.data);
      const data = await gql(hooks, `{ webhooks(first: 100) { ${pageInfo} edges { node ${selection} } } }`);
      expect(nodes(data.webhooks)).toEqual(graphqlOf(body.data, WebhookSubscription));
      for (const item of body.data) {
        expect((await rest(hooks, `/v1/webhooks/${item.id}`)).data).toEqual(item);
        const n = await gql(hooks, `{ node(id: "${item.id}") { ... on WebhookSubscription ${selection} } }`);
        expect(n.node).toEqual(graphqlOf(item, WebhookSubscription));
        // Its delivery log = the deliveries connection.
        const log = await rest(hooks, `/v1/webhooks/${item.id}/deliveries?limit=100`);
        record(WebhookDelivery.name, WebhookDelivery, log.data);
        const g = await gql(
          hooks,
          `{ node(id: "${item.id}") { ... on WebhookSubscription { deliveries(first: 100) { ${pageInfo} edges { node ${selectionOf(WebhookDelivery)} } } } } }`,
        );
        expect(nodes(g.node.deliveries)).toEqual(graphqlOf(log.data, WebhookDelivery));
      }
    });

    it('working hours and availability = workingHours and availability', async () => {
      let intervals = 0;
      for (const p of (await rest(key, '/v1/catalog/providers')).data) {
        const hours = await rest(key, `/v1/catalog/providers/${p.id}/working_hours`);
        record('WorkingInterval', WorkingInterval, hours.data);
        const g = await gql(key, `{ workingHours(providerId: "${p.id}") ${selectionOf(WorkingInterval)} }`);
        expect(g.workingHours).toEqual(graphqlOf(hours.data, WorkingInterval));
        intervals += hours.data.length;
      }
      expect(intervals).toBeGreaterThan(0);
      const [type] = (await rest(key, '/v1/catalog/appointments/types')).data;
      // The week after the test clock's Sunday.
      const slots = await rest(
        key,
        `/v1/availability?appointment_type_id=${type.id}&from=2026-11-02&to=2026-11-09`,
      );
      record('AvailableSlot', AvailableSlot, slots.data);
      expect(slots.data.length).toBeGreaterThan(0);
      const g = await gql(
        key,
        `{ availability(appointmentTypeId: "${type.id}", from: "2026-11-02", to: "2026-11-09") ${selectionOf(AvailableSlot)} }`,
      );
      expect(g.availability).toEqual(graphqlOf(slots.data, AvailableSlot));
    });

    for (const list of catalogLists) {
      const route = restRoutes.find((r) => r.field === list.restName);
      it(`${list.publicName} = GET /v1${route?.path ?? ` (no route for ${list.restName})`}`, async () => {
        if (!route) throw new Error(`no REST route for ${list.restName}`);
        const selection = selectionOf(list.resource);
        const body = await rest(key, withQuery(`/v1${route.path}`, everyGroup(list.resource).query));
        record(list.resource.name, list.resource, body.data);
        expect((await gql(key, `{ ${list.publicName} ${selection} }`))[list.publicName]).toEqual(
          graphqlOf(body.data, list.resource),
        );
        if (list.veterinaryOnly && clinic.kind !== 'veterinary') expect(body.data).toEqual([]);
        else expect(body.data.length).toBeGreaterThan(0);

        // Each entry by id, the disabled ones too (out of the list): REST = node(id:).
        const disabled = await app.orm.em
          .fork()
          .find(
            entityNamed(list.resource.kind),
            { clinic: clinicId, disabledAt: { $ne: null } },
            { filters: false },
          );
        const entryIds = [
          ...body.data.map((e: Row) => e.id),
          ...disabled.map((e: any) => toId(list.resource.kind, e.id)),
        ];
        // test/full-fixtures.ts disables one entry of each list at the veterinary clinic.
        if (clinic.kind === 'veterinary') expect(disabled.length).toBeGreaterThan(0);
        for (const id of entryIds) {
          const one = (await rest(key, `/v1${route.path}/${id}`)).data;
          record(list.resource.name, list.resource, one);
          const n = await gql(key, `{ node(id: "${id}") { ... on ${list.resource.name} ${selection} } }`);
          expect(n.node).toEqual(graphqlOf(one, list.resource));
        }

        // Filters name a field of the resource; filtering by each value it takes answers the same.
        for (const name of Object.keys(list.filters ?? {})) {
          expect(Object.keys(list.resource.fields), `filter ${name}`).toContain(name);
          for (const value of new Set(body.data.map((i: Row) => i[name]).filter((v: unknown) => v != null))) {
            const filtered = await rest(
              key,
              withQuery(`/v1${route.path}`, `${name}=${value}`, everyGroup(list.resource).query),
            );
            expect(filtered.data).toEqual(body.data.filter((i: Row) => i[name] === value));
            const data = await gql(key, `{ ${list.publicName}(${camelOf(name)}: "${value}") ${selection} }`);
            expect(data[list.publicName]).toEqual(graphqlOf(filtered.data, list.resource));
          }
        }
      });
    }
  });
}

// ---------- coverage, from the definitions ----------

/**
 * Places a nullable field can never be null, because the database column is NOT NULL. Each must
 * still be a nullable field never seen null: a stale entry fails too.
 */
const neverNull: Record<string, string> = {
  'Patient.created_at': 'patient.created_at is NOT NULL',
  'Patient.updated_at': 'patient.updated_at is NOT NULL',
  'Appointment.status.color':
    'appointment_status.color is NOT NULL (StatusRef is shared with patient statuses)',
  'Conversation.patient_phone': 'conversation.patient_phone is NOT NULL (one conversation per phone)',
  'Conversation.patients.phone': 'patients are matched by their phone',
  'Conversation.created_at': 'conversation.created_at is NOT NULL',
  'Conversation.updated_at': 'conversation.updated_at is NOT NULL',
  'Message.conversation_id': 'message.conversation_id is NOT NULL',
  'Message.patient_phone': 'message.patient_phone is NOT NULL',
  'Message.patients.phone': 'patients are matched by their phone',
  'Message.created_at': 'message.created_at is NOT NULL',
  'Message.updated_at': 'message.updated_at is NOT NULL',
};

const roots: Resource[] = [
  Patient,
  ...records.map((r) => r.resource),
  ...catalogLists.map((l) => l.resource),
  Conversation,
  Message,
  Template,
  EventEnvelope,
  WebhookSubscription,
  WebhookDelivery,
];

describe('the comparisons covered every definition', () => {
  it('every GET route, every GraphQL root field and every Patient connection was compared', async () => {
    const getRoutes = restRoutes.filter((r) => r.method === 'GET').map((r) => r.field);
    expect(getRoutes.filter((f) => !routesHit.has(f))).toEqual([]);

    const { key } = await app.clinicWithKey('veterinary', readScopes, 'introspection');
    const r = await app.gql(
      '{ __schema { queryType { fields { name } } } __type(name: "Patient") { fields { name } } }',
      {},
      key,
    );
    const rootFields: string[] = r.body.data.__schema.queryType.fields.map((f: { name: string }) => f.name);
    expect(rootFields.filter((f) => !rootFieldsAsked.has(f))).toEqual([]);
    const patientFields: string[] = r.body.data.__type.fields.map((f: { name: string }) => f.name);
    const compared = [
      ...Object.keys(Patient.fields).map(camelOf),
      ...records.map((c) => c.field),
      'chatMessages',
      'chatConversations',
    ];
    expect(patientFields.filter((f) => !compared.includes(f))).toEqual([]);
  });

  it('every shape was returned, and each of its fields had a value in some object of it', () => {
    const missing: string[] = [];
    for (const shape of allShapes()) {
      const fields = byShape.get(shape);
      if (!fields) missing.push(`${shape.name} (never returned)`);
      else
        for (const name of Object.keys(shape.fields))
          if (!fields.get(name)?.value) missing.push(`${shape.name}.${name}`);
    }
    expect(missing).toEqual([]);
  });

  it('at every place of every resource, each field had a value somewhere and each nullable one was null somewhere', () => {
    const noValue: string[] = [];
    const neverSeenNull: string[] = [];
    for (const root of roots)
      for (const { path, field } of placesOf(root, root.name)) {
        const seen = byPath.get(path);
        if (!seen?.value) noValue.push(path);
        if (field.nullable && !seen?.null && !neverNull[path]) neverSeenNull.push(path);
        if (neverNull[path] && (!field.nullable || seen?.null))
          neverSeenNull.push(`${path} (stale neverNull entry)`);
      }
    expect(noValue).toEqual([]);
    expect(neverSeenNull).toEqual([]);
  });

  it('no two fields of an object always hold the same value (a field reading the wrong source)', () => {
    const alike: string[] = [];
    for (const [path, { shape, objects }] of objectsAt) {
      const names = Object.keys(shape.fields);
      const json = objects.map((o) =>
        Object.fromEntries(names.map((n) => [n, JSON.stringify(o[n] ?? null)])),
      );
      for (const [i, a] of names.entries())
        for (const b of names.slice(i + 1))
          if (json.every((o) => o[a] === o[b])) alike.push(`${path}: ${a} = ${b}`);
    }
    expect(alike).toEqual([]);
  });
});
