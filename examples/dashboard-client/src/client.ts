import { type Client, createClient } from 'graphql-ws';
import type { TypedDocumentString } from './gql/graphql.ts';

/** Where the service's GraphQL is, and the API key the dashboard uses. */
export interface Connection {
  /** The /graphql endpoint, e.g. http://127.0.0.1:4000/graphql; subscriptions use its ws:// twin. */
  url: string;
  apiKey: string;
}

export type ResultOf<D> = D extends TypedDocumentString<infer R, any> ? R : never;
export type VariablesOf<D> = D extends TypedDocumentString<any, infer V> ? V : never;

interface GraphQLError {
  message: string;
  extensions?: { code?: string; [key: string]: unknown };
}

/** The service answered with errors (`extensions.code` is the REST error code: docs/errors.md). */
export class GraphQLRequestError extends Error {
  readonly errors: readonly GraphQLError[];
  constructor(errors: readonly GraphQLError[]) {
    super(
      errors.map((e) => (e.extensions?.code ? `${e.extensions.code}: ${e.message}` : e.message)).join('; '),
    );
    this.name = 'GraphQLRequestError';
    this.errors = errors;
  }
}

/** Runs a query or mutation over HTTP; the result is typed by the document. */
export async function request<R, V>(
  connection: Connection,
  document: TypedDocumentString<R, V>,
  variables: V,
): Promise<R> {
  const res = await fetch(connection.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json, application/json',
      authorization: `Bearer ${connection.apiKey}`,
    },
    body: JSON.stringify({ query: document.toString(), variables }),
  });
  const text = await res.text();
  let body: { data?: R | null; errors?: GraphQLError[] };
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`GraphQL answered ${res.status} with a body that is not JSON: ${text.slice(0, 200)}`);
  }
  if (body.errors?.length) throw new GraphQLRequestError(body.errors);
  if (body.data == null) throw new Error(`GraphQL answered ${res.status} without data.`);
  return body.data;
}

/** The close code of a refused key: missing, unknown, revoked or short of a scope (docs/events.md). */
export const KEY_REFUSED = 4403;

/**
 * graphql-ws's `shouldRetry`: reconnect after a socket closed for another reason (graphql-ws's
 * default: close events only), never after a 4403. graphql-ws retries 4403 by default, and the
 * same key is refused again; a new key needs a new client.
 */
export function shouldRetry(errOrCloseEvent: unknown): boolean {
  if (typeof errOrCloseEvent !== 'object' || errOrCloseEvent === null) return false;
  if (!('code' in errOrCloseEvent) || !('reason' in errOrCloseEvent)) return false;
  return errOrCloseEvent.code !== KEY_REFUSED;
}

/**
 * One graphql-ws connection for the dashboard's subscriptions; the key goes in connection_init.
 * A dropped socket is reconnected (graphql-ws's default attempts and backoff); a refused key
 * ends the subscriptions at once with the 4403 close event.
 */
export function subscriptionClient(connection: Connection): Client {
  return createClient({
    url: connection.url.replace(/^http/, 'ws'),
    connectionParams: { Authorization: `Bearer ${connection.apiKey}` },
    shouldRetry,
  });
}

/** The results of a subscription, typed by the document; an error result ends it with the errors. */
export async function* subscribe<R, V extends Record<string, unknown>>(
  client: Client,
  document: TypedDocumentString<R, V>,
  variables: V,
): AsyncGenerator<R, void, undefined> {
  // Leaving this loop (the caller's break, or an error) completes the subscription on the server.
  for await (const result of client.iterate<R>({ query: document.toString(), variables })) {
    if (result.errors?.length) throw new GraphQLRequestError(result.errors);
    if (result.data != null) yield result.data;
  }
}
