/**
 * One GraphQL operation over POST /graphql with a key, for the pages that run a script of their
 * own (the live inbox and the webhook portal share this module): the first error becomes an
 * ApiError with its code and parameter, a service that does not answer or answers no GraphQL says
 * so in words.
 */

const http = new URL('/graphql', location.href).href;

export class ApiError extends Error {
  constructor(message, code, param) {
    super(message);
    this.code = code;
    this.param = param;
  }
}

/** `key` null sends none (introspection is open without one). */
export async function gql(query, variables, key) {
  let response;
  try {
    response = await fetch(http, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(key ? { authorization: `Bearer ${key}` } : {}),
      },
      body: JSON.stringify({ query, variables }),
    });
  } catch {
    throw new ApiError('The service did not answer: check that it runs, then try again.', 'network');
  }
  let body;
  try {
    body = await response.json();
  } catch {
    throw new ApiError(`The service answered HTTP ${response.status}, not GraphQL.`, 'http');
  }
  const error = body.errors?.[0];
  if (error) throw new ApiError(error.message, error.extensions?.code ?? 'error', error.extensions?.param);
  return body.data;
}
