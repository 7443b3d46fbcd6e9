/**
 * @clinic-gateway/sdk: typed clients for the clinic-gateway API, generated from its contracts
 * (openapi.json, schema.graphql) by the repository's `npm run contracts`.
 */

export type { ResultOf, TypedDocumentNode, VariablesOf } from '@graphql-typed-document-node/core';
// The schema's input and enum types and each operation's result and variables types.
export type * from './generated/graphql.js';
export {
  AppointmentTypesDocument,
  BookAppointmentDocument,
  ClinicEventsDocument,
  FreeSlotsDocument,
  NewestEventDocument,
  PatientsPageDocument,
} from './generated/graphql.js';
export type { components, operations, paths, webhooks } from './generated/openapi.js';
export {
  type Connection,
  type GraphQLErrorEntry,
  GraphQLRequestError,
  queryOf,
  request,
  type VariablesArgument,
} from './graphql.js';
export { createRestClient, type RestClient, type RestClientOptions, type Schemas } from './rest.js';
export {
  type ClinicEvent,
  createSubscriptionClient,
  REFUSED_CLOSE_CODES,
  type SubscriptionClient,
  type SubscriptionClientOptions,
  SubscriptionClosedError,
  shouldRetry,
} from './subscriptions.js';
// verifyWebhook is `@clinic-gateway/sdk/webhooks`: it needs node:crypto, which a browser bundle of
// this entry (Apollo, urql) must not pull in.
