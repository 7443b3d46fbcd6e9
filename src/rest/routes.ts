import type { IdKind } from '../lib/ids.ts';
import { allWrites } from '../services/all-writes.ts';
import { restFieldOf } from '../services/writes.ts';
/**
 * The /v1 route table: every Rest root field, its method, path and success status. SOFA would
 * derive paths from field names; the spec's paths are explicit here instead.
 */
export interface RestRoute {
  field: string;
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
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
    field: 'restSendMessage',
    method: 'POST',
    path: '/chat/messages',
    status: 202,
    tag: 'Chat',
    summary: 'Send a message',
  },
  {
    field: 'restReactToMessage',
    method: 'POST',
    path: '/chat/messages/:id/reaction',
    ids: { id: 'Message' },
    status: 200,
    tag: 'Chat',
    summary: 'React to a message',
  },
  {
    field: 'restMarkConversationHandled',
    method: 'POST',
    path: '/chat/conversations/:id/handled',
    ids: { id: 'Conversation' },
    status: 200,
    tag: 'Chat',
    summary: 'Mark a conversation handled or unhandled',
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
    field: 'listBranches',
    method: 'GET',
    path: '/catalog/branches',
    status: 200,
    tag: 'Catalog',
    summary: 'Branches',
  },
  {
    field: 'listAppointmentTypes',
    method: 'GET',
    path: '/catalog/appointments/types',
    status: 200,
    tag: 'Catalog',
    summary: 'Appointment types',
  },
  {
    field: 'listAppointmentStatuses',
    method: 'GET',
    path: '/catalog/appointments/statuses',
    status: 200,
    tag: 'Catalog',
    summary: 'Appointment statuses',
  },
  {
    field: 'listTreatmentMenu',
    method: 'GET',
    path: '/catalog/treatments',
    status: 200,
    tag: 'Catalog',
    summary: 'Treatment menu',
  },
  {
    field: 'listProviders',
    method: 'GET',
    path: '/catalog/providers',
    status: 200,
    tag: 'Catalog',
    summary: 'Providers',
  },
  {
    field: 'listBillingAccounts',
    method: 'GET',
    path: '/catalog/billing/accounts',
    status: 200,
    tag: 'Catalog',
    summary: 'Billing accounts',
  },
  {
    field: 'listSpecies',
    method: 'GET',
    path: '/catalog/species',
    status: 200,
    tag: 'Catalog',
    summary: 'Species (veterinary)',
  },
  {
    field: 'listBreeds',
    method: 'GET',
    path: '/catalog/breeds',
    status: 200,
    tag: 'Catalog',
    summary: 'Breeds (veterinary)',
  },
  {
    field: 'listVaccines',
    method: 'GET',
    path: '/catalog/vaccines',
    status: 200,
    tag: 'Catalog',
    summary: 'Vaccines (veterinary)',
  },
  {
    field: 'listMeasurements',
    method: 'GET',
    path: '/catalog/measurements',
    status: 200,
    tag: 'Catalog',
    summary: 'Measurements (veterinary)',
  },
];

/** Reads, then every write of src/services (their definitions carry their routes). */
export const restRoutes: RestRoute[] = [
  ...readRoutes,
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
