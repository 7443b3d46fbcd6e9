import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { type DocumentNode, print } from 'graphql';

/** Where the service's GraphQL is, and the API key to use. */
export interface Connection {
  /** The /graphql endpoint, e.g. http://127.0.0.1:4000/graphql; subscriptions use its ws:// twin. */
  url: string;
  apiKey: string;
  /** Another fetch (a proxy agent, a test double); the global one by default. */
  fetch?: typeof fetch;
}

/** One error of a GraphQL answer; `extensions.code` is the REST error code (docs/errors.md). */
export interface GraphQLErrorEntry {
  message: string;
  path?: readonly (string | number)[];
  extensions?: { code?: string; [key: string]: unknown };
}

/** The service answered with errors: each one's code and message, and the HTTP status. */
export class GraphQLRequestError extends Error {
  readonly errors: readonly GraphQLErrorEntry[];
  readonly status: number;
  constructor(errors: readonly GraphQLErrorEntry[], status: number) {
    super(
      errors.map((e) => (e.extensions?.code ? `${e.extensions.code}: ${e.message}` : e.message)).join('; '),
    );
    this.name = 'GraphQLRequestError';
    this.errors = errors;
    this.status = status;
  }
}

const printed = new WeakMap<DocumentNode, string>();

/** A document's text, printed once: the generated documents are objects, the wire takes text. */
export function queryOf(document: DocumentNode): string {
  let text = printed.get(document);
  if (text === undefined) {
    text = print(document);
    printed.set(document, text);
  }
  return text;
}

/** Variables may be left out when the operation has none, or none required. */
export type VariablesArgument<V> = Record<string, never> extends V ? [variables?: V] : [variables: V];

/**
 * Runs a query or mutation over HTTP with fetch; the answer's data is typed by the document.
 * Errors (a 401 included: the service answers it as GraphQL errors to a client that accepts
 * application/graphql-response+json) throw a GraphQLRequestError.
 */
export async function request<R, V>(
  connection: Connection,
  document: TypedDocumentNode<R, V>,
  ...[variables]: VariablesArgument<V>
): Promise<R> {
  const res = await (connection.fetch ?? fetch)(connection.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json, application/json',
      authorization: `Bearer ${connection.apiKey}`,
    },
    body: JSON.stringify({ query: queryOf(document), variables: variables ?? {} }),
  });
  const text = await res.text();
  let body: { data?: R | null; errors?: GraphQLErrorEntry[] };
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`GraphQL answered ${res.status} with a body that is not JSON: ${text.slice(0, 200)}`);
  }
  if (body.errors?.length) throw new GraphQLRequestError(body.errors, res.status);
  if (body.data == null) throw new Error(`GraphQL answered ${res.status} without data.`);
  return body.data;
}
