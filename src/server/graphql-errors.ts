import { GraphQLError } from 'graphql';
import { findAppError, toAppError } from '../lib/errors.ts';
import { currentRequestId } from '../lib/request-context.ts';

/**
 * The GraphQL mapping of the one error type: `extensions.code` (and `param`, `required_scopes`,
 * `request_id`) as in REST bodies. Only authentication and the rate limit change the HTTP status
 * of a GraphQL response; everything else is HTTP 200 with the error in `errors`.
 */
export function toGraphQLError(error: unknown): GraphQLError {
  const app = toAppError(error);
  const gql = error instanceof GraphQLError ? error : undefined;
  // Yoga's own request errors (405 with Allow, 400, 413) keep their status and headers.
  const http = !findAppError(error) && gql?.extensions?.http;
  return new GraphQLError(app.message, {
    nodes: gql?.nodes,
    path: gql?.path,
    extensions: {
      code: app.code,
      ...(app.param ? { param: app.param } : {}),
      ...(app.details?.required_scopes ? { required_scopes: app.details.required_scopes } : {}),
      request_id: currentRequestId(),
      ...(http ? { http } : {}),
      ...(app.code === 'unauthenticated' || app.code === 'rate_limited'
        ? { http: { status: app.status } }
        : {}),
    },
  });
}
