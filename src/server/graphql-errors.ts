import { GraphQLError } from 'graphql';
import { redactCardData } from '../lib/card-numbers.ts';
import { docUrlOf } from '../lib/error-docs.ts';
import { type ErrorCode, findAppError, RETRY_AFTER_UNAVAILABLE, toAppError } from '../lib/errors.ts';
import { currentRequest, currentRequestId } from '../lib/request-context.ts';

/**
 * Errors that refuse the whole request: its HTTP status is theirs. Everything else is HTTP 200
 * with the error in `errors` beside whatever data could be read.
 */
const requestLevel: ReadonlySet<ErrorCode> = new Set([
  'unauthenticated',
  'rate_limited',
  'payload_too_large',
  'query_too_complex',
  'response_too_large',
  'service_unavailable',
  'deadline_exceeded',
]);

/**
 * The GraphQL mapping of the one error type: `extensions.code` (and `param`, `required_scopes`,
 * the figures of a limit, `request_id`, `doc_url`) as in REST bodies.
 */
export function toGraphQLError(error: unknown): GraphQLError {
  const app = toAppError(error);
  const gql = error instanceof GraphQLError ? error : undefined;
  // Yoga's own request errors (405 with Allow, 400, 413) keep their status and headers.
  const http = !findAppError(error) && gql?.extensions?.http;
  // graphql-js quotes the value it refuses (a card number sent as an Int, a security code in a
  // field the input type lacks): no card number or security code goes back or into a log
  // (src/lib/card-numbers.ts).
  return new GraphQLError(redactCardData(app.message), {
    nodes: gql?.nodes,
    path: gql?.path,
    extensions: {
      code: app.code,
      ...(app.param ? { param: app.param } : {}),
      ...(app.details ?? {}),
      request_id: currentRequestId(),
      doc_url: docUrlOf(app.code),
      ...(http ? { http } : {}),
      ...(requestLevel.has(app.code) && !committedBefore(app.code)
        ? {
            http: {
              status: app.status,
              ...(app.code === 'service_unavailable'
                ? { headers: { 'Retry-After': RETRY_AFTER_UNAVAILABLE } }
                : {}),
            },
          }
        : {}),
    },
  });
}

/**
 * A deadline that stopped a later mutation of a request that already committed one: not the
 * request's 504 (which says nothing was written), but an error at the stopped field's path beside
 * the committed one's answer (docs/limits.md, "A 504 on a write").
 */
const committedBefore = (code: ErrorCode) => code === 'deadline_exceeded' && !!currentRequest()?.commits;
