import type { IdKind } from '../lib/ids.ts';
import { allWrites } from '../services/all-writes.ts';
import { catalogLists, nounText } from '../services/catalog/catalog.ts';
import { restFieldOf } from '../services/writes.ts';
/**
 * The /v1 route table: every Rest root field, its method, path and success status. SOFA would
 * derive paths from field names; the spec's paths are explicit here instead.
 */
export interface RestRoute {
  field: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  status: 200 | 201 | 202 | 204;
  tag: string;
  summary: string;
  /** The kind of id each path parameter takes (its pattern in the OpenAPI document). */
  ids?: Record<string, IdKind>;
}

const readRoutes: RestRoute[] = [
  {
    field: 'listPatients',
    method: 'GET',
    path: '/patients',
    status: 200,
    tag: 'Patients',
    summary: 'Search patients',
  },
  {
    field: 'getPatient',
    method: 'GET',
    path: '/patients/:id',
    ids: { id: 'Patient' },
    status: 200,
    tag: 'Patients',
    summary: 'Get a patient',
  },
  {
    field: 'listPatientAppointments',
    method: 'GET',
    path: '/patients/:id/appointments',
    ids: { id: 'Patient' },
    status: 200,
    tag: 'Patients',
    summary: "A patient's appointments",
  },
  {
    field: 'listPatientTreatments',
    method: 'GET',
    path: '/patients/:id/treatments',
    ids: { id: 'Patient' },
    status: 200,
    tag: 'Patients',
    summary: "A patient's treatments",
  },
  {
    field: 'listPatientPayments',
    method: 'GET',
    path: '/patients/:id/payments',
    ids: { id: 'Patient' },
    status: 200,
    tag: 'Patients',
    summary: "A patient's payments and refunds",
  },
  {
    field: 'listPatientChatMessages',
    method: 'GET',
    path: '/patients/:id/chat/messages',
    ids: { id: 'Patient' },
    status: 200,
    tag: 'Patients',
    summary: "Chat messages of a patient's phone",
  },
  {
    field: 'listAppointments',
    method: 'GET',
    path: '/appointments',
    status: 200,
    tag: 'Appointments',
    summary: 'Appointments',
  },
  {
    field: 'getAppointment',
    method: 'GET',
    path: '/appointments/:id',
    ids: { id: 'Appointment' },
    status: 200,
    tag: 'Appointments',
    summary: 'Get an appointment',
  },
  {
    field: 'listTreatments',
    method: 'GET',
    path: '/treatments',
    status: 200,
    tag: 'Treatments',
    summary: 'Treatments',
  },
  {
    field: 'getTreatment',
    method: 'GET',
    path: '/treatments/:id',
    ids: { id: 'Treatment' },
    status: 200,
    tag: 'Treatments',
    summary: 'Get a treatment',
  },
  {
    field: 'listPayments',
    method: 'GET',
    path: '/payments',
    status: 200,
    tag: 'Payments',
    summary: 'Payments and refunds',
  },
  {
    field: 'getPayment',
    method: 'GET',
    path: '/payments/:id',
    ids: { id: 'Payment' },
    status: 200,
    tag: 'Payments',
    summary: 'Get a payment or refund',
  },
  {
    field: 'listCalls',
    method: 'GET',
    path: '/calls',
    status: 200,
    tag: 'Calls',
    summary: 'Calls',
  },
  {
    field: 'getCall',
    method: 'GET',
    path: '/calls/:id',
    ids: { id: 'Call' },
    status: 200,
    tag: 'Calls',
    summary: 'Get a call',
  },
  {
    field: 'getCallRecording',
    method: 'GET',
    path: '/calls/:id/recording',
    ids: { id: 'Call' },
    status: 200,
    tag: 'Calls',
    summary: "A link to a call's recording",
  },
  {
    field: 'listAnimals',
    method: 'GET',
    path: '/animals',
    status: 200,
    tag: 'Animals',
    summary: 'Animals (veterinary)',
  },
  {
    field: 'getAnimal',
    method: 'GET',
    path: '/animals/:id',
    ids: { id: 'Patient' },
    status: 200,
    tag: 'Animals',
    summary: 'Get an animal (veterinary)',
  },
  {
    field: 'listClients',
    method: 'GET',
    path: '/clients',
    status: 200,
    tag: 'Clients',
    summary: 'Clients (veterinary)',
  },
  {
    field: 'getClient',
    method: 'GET',
    path: '/clients/:id',
    ids: { id: 'Owner' },
    status: 200,
    tag: 'Clients',
    summary: 'Get a client (veterinary)',
  },
  {
    field: 'getProviderWorkingHours',
    method: 'GET',
    path: '/catalog/providers/:id/working_hours',
    ids: { id: 'Provider' },
    status: 200,
    tag: 'Availability',
    summary: "A provider's working hours",
  },
  {
    field: 'listAvailability',
    method: 'GET',
    path: '/availability',
    status: 200,
    tag: 'Availability',
    summary: 'Free slots of an appointment type',
  },
  {
    field: 'listConversations',
    method: 'GET',
    path: '/chat/conversations',
    status: 200,
    tag: 'Chat',
    summary: 'Conversations',
  },
  {
    field: 'getConversation',
    method: 'GET',
    path: '/chat/conversations/:id',
    ids: { id: 'Conversation' },
    status: 200,
    tag: 'Chat',
    summary: 'Get a conversation',
  },
  {
    field: 'listConversationMessages',
    method: 'GET',
    path: '/chat/conversations/:id/messages',
    ids: { id: 'Conversation' },
    status: 200,
    tag: 'Chat',
    summary: "A conversation's messages",
  },
  {
    field: 'listMessages',
    method: 'GET',
    path: '/chat/messages',
    status: 200,
    tag: 'Chat',
    summary: 'Messages across conversations',
  },
  {
    field: 'getMessage',
    method: 'GET',
    path: '/chat/messages/:id',
    ids: { id: 'Message' },
    status: 200,
    tag: 'Chat',
    summary: 'Get a message',
  },
  {
    field: 'getMessageMedia',
    method: 'GET',
    path: '/chat/messages/:id/media',
    ids: { id: 'Message' },
    status: 200,
    tag: 'Chat',
    summary: "A link to a message's media",
  },
  {
    field: 'listTemplates',
    method: 'GET',
    path: '/chat/templates',
    status: 200,
    tag: 'Chat',
    summary: 'Message templates',
  },
  {
    field: 'listEvents',
    method: 'GET',
    path: '/events',
    status: 200,
    tag: 'Events',
    summary: 'Events, newest first',
  },
  {
    field: 'getEvent',
    method: 'GET',
    path: '/events/:id',
    ids: { id: 'Event' },
    status: 200,
    tag: 'Events',
    summary: 'Get an event',
  },
  {
    field: 'listWebhooks',
    method: 'GET',
    path: '/webhooks',
    status: 200,
    tag: 'Webhooks',
    summary: "The clinic's webhook subscriptions, oldest first",
  },
  {
    field: 'getWebhook',
    method: 'GET',
    path: '/webhooks/:id',
    ids: { id: 'WebhookSubscription' },
    status: 200,
    tag: 'Webhooks',
    summary: 'Get a webhook subscription',
  },
  {
    field: 'listWebhookDeliveries',
    method: 'GET',
    path: '/webhooks/:id/deliveries',
    ids: { id: 'WebhookSubscription' },
    status: 200,
    tag: 'Webhooks',
    summary: "A subscription's delivery attempts, newest first",
  },
];

/** Each catalog list and each of its entries by id (src/services/catalog/catalog.ts). */
const catalogRoutes: RestRoute[] = catalogLists.flatMap((l) => [
  { field: l.restName, method: 'GET', path: l.path, status: 200, tag: 'Catalog', summary: l.summary },
  {
    field: `get${l.noun}`,
    method: 'GET',
    path: `${l.path}/:id`,
    ids: { id: l.resource.kind },
    status: 200,
    tag: 'Catalog',
    summary: `Get a ${nounText(l)}, disabled or not`,
  },
]);

/** Reads, then every write of src/services (their definitions carry their routes). */
export const restRoutes: RestRoute[] = [
  ...readRoutes,
  ...catalogRoutes,
  ...allWrites().map((op) => ({
    field: restFieldOf(op),
    method: op.method,
    path: op.path,
    status: op.status,
    tag: op.tag,
    summary: op.summary,
    ...(op.ids ? { ids: op.ids } : {}),
  })),
];

const compiled = restRoutes.map((r) => ({
  route: r,
  re: new RegExp(`^${r.path.replace(/:[a-z_]+/g, '[^/]+')}/?$`),
}));

/** Matches a path under /v1 (without the prefix): the route, or which methods the path allows. */
export function matchRoute(method: string, path: string): { route?: RestRoute; allowed: string[] } {
  const hits = compiled.filter((c) => c.re.test(path));
  return {
    route: hits.find((h) => h.route.method === method)?.route,
    allowed: hits.map((h) => h.route.method),
  };
}
