import { ApolloClient, ApolloLink, HttpLink, InMemoryCache } from '@apollo/client';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { isSubscriptionOperation, relayStylePagination } from '@apollo/client/utilities';
import {
  ClinicEventsDocument,
  createSubscriptionClient,
  PatientsPageDocument,
  type PatientsPageQuery,
} from '@clinic-gateway/sdk';
import { fetchExchange, Client as UrqlClient } from '@urql/core';
import type { Service } from './dashboard.ts';

/**
 * The SDK's documents in the clients dashboards already run: they are typed DocumentNode objects
 * (TypedDocumentNode), which Apollo Client 4 and urql take with their result and variables types.
 */

/**
 * Apollo Client 4: queries over HTTP, subscriptions over the SDK's graphql-ws client (which stops
 * at a refused key), and `patients` pages merged by their cursor in the cache.
 */
export function apolloClient(service: Service): ApolloClient {
  const http = new HttpLink({
    uri: `${service.baseUrl}/graphql`,
    headers: { authorization: `Bearer ${service.apiKey}` },
  });
  const ws = new GraphQLWsLink(
    createSubscriptionClient({
      url: `${service.baseUrl}/graphql`,
      apiKey: service.apiKey,
      ...(service.webSocketImpl ? { webSocketImpl: service.webSocketImpl } : {}),
    }),
  );
  return new ApolloClient({
    link: ApolloLink.split(({ query }) => isSubscriptionOperation(query), ws, http),
    cache: new InMemoryCache({
      typePolicies: { Query: { fields: { patients: relayStylePagination(['phone', 'email', 'query']) } } },
    }),
  });
}

type Patients = NonNullable<PatientsPageQuery['patients']>;

/** Two pages of patients through Apollo: the second is fetched by the first's endCursor and merged. */
export async function twoPagesWithApollo(client: ApolloClient): Promise<Patients['edges']> {
  const observable = client.watchQuery({ query: PatientsPageDocument, variables: { first: 10 } });
  const first = await observable.refetch();
  const cursor = first.data?.patients?.pageInfo.endCursor;
  if (!cursor) return first.data?.patients?.edges ?? [];
  const more = await observable.fetchMore({ variables: { after: cursor } });
  return more.data?.patients?.edges ?? [];
}

/** The clinic's appointment bookings as Apollo delivers them, typed by the subscription. */
export function bookingsWithApollo(client: ApolloClient, onEvent: (id: string, data: unknown) => void) {
  return client
    .subscribe({ query: ClinicEventsDocument, variables: { types: ['APPOINTMENT_CREATED'] } })
    .subscribe(({ data }) => {
      if (data) onEvent(data.events.id, data.events.data);
    });
}

/** urql: the same document, the same types. */
export async function firstPageWithUrql(service: Service): Promise<Patients['edges']> {
  const client = new UrqlClient({
    url: `${service.baseUrl}/graphql`,
    exchanges: [fetchExchange],
    fetchOptions: { headers: { authorization: `Bearer ${service.apiKey}` } },
  });
  const { data, error } = await client.query(PatientsPageDocument, { first: 10 }).toPromise();
  if (error) throw error;
  return data?.patients?.edges ?? [];
}
