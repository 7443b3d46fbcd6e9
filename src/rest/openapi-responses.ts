import { docUrlOf } from '../lib/error-docs.ts';
import { type ErrorCode, RETRY_AFTER_UNAVAILABLE } from '../lib/errors.ts';
import { defaultLimits } from '../lib/limits.ts';

/**
 * The OpenAPI document's responses other than success (src/rest/openapi.ts): the error response
 * with its example, the ones every operation shares as components, and the headers they carry.
 */
export const requestIdHeader = { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } };

/** Headers of every response to an authenticated request (src/auth/rate-limit.ts). */
export const authenticatedHeaders = {
  'RateLimit-Policy': { $ref: '#/components/headers/RateLimitPolicy' },
  'RateLimit-Limit': { $ref: '#/components/headers/RateLimitLimit' },
  'RateLimit-Remaining': { $ref: '#/components/headers/RateLimitRemaining' },
  'RateLimit-Reset': { $ref: '#/components/headers/RateLimitReset' },
  ...requestIdHeader,
};
export const retryAfter = { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } };

export function errorResponse(
  description: string,
  example: { code: string; message: string; param?: string; required_scopes?: string[] },
  headers: Record<string, unknown> = authenticatedHeaders,
) {
  return {
    description,
    headers,
    content: {
      'application/json': {
        schema: { $ref: '#/components/schemas/Error' },
        example: {
          error: {
            code: example.code,
            message: example.message,
            ...(example.param ? { param: example.param } : {}),
            request_id: 'req_3kTq9xYb2mN1',
            // Request bodies' documented errors name their code as a string (src/rest/request-bodies.ts).
            doc_url: docUrlOf(example.code as ErrorCode),
            ...(example.required_scopes ? { required_scopes: example.required_scopes } : {}),
          },
        },
      },
    },
  };
}

/** The responses every operation has, as components each operation refers to. */
export const sharedResponses = {
  Unauthenticated: errorResponse(
    '`unauthenticated`: the Authorization header is missing, or the key is invalid or revoked.',
    { code: 'unauthenticated', message: 'Invalid or revoked API key.' },
    requestIdHeader,
  ),
  MethodNotAllowed: errorResponse(
    '`method_not_allowed`: the path exists but not with this method; `Allow` names the methods it has. Sent before authentication.',
    { code: 'method_not_allowed', message: 'POST is not allowed on /v1/patients; use GET.' },
    { Allow: { $ref: '#/components/headers/Allow' }, ...requestIdHeader },
  ),
  RateLimited: errorResponse(
    '`rate_limited`: this API key has spent its budget of points for the window (a request spends its cost, about one point per record read), or its address failed authentication too often. Sent after a short delay.',
    {
      code: 'rate_limited',
      message: `This API key has spent its budget of ${defaultLimits.rateLimitPoints} points per ${defaultLimits.rateLimitWindowSeconds} s (this request costs 101). Retry after 4 s.`,
    },
    { ...retryAfter, ...authenticatedHeaders },
  ),
  InternalError: errorResponse(
    '`internal_error`: something failed on our side; quote `request_id` when reporting it.',
    {
      code: 'internal_error',
      message: 'Something went wrong on our side. Quote the request_id when reporting it.',
    },
  ),
  ServiceUnavailable: errorResponse(
    `\`service_unavailable\`: the database is unreachable at the moment; retry after \`Retry-After\` seconds (${RETRY_AFTER_UNAVAILABLE}).`,
    {
      code: 'service_unavailable',
      message: 'The database is unreachable at the moment; retry after the time in Retry-After.',
    },
    { ...retryAfter, ...requestIdHeader },
  ),
  DeadlineExceeded: errorResponse(
    '`deadline_exceeded`: the request ran longer than its deadline and was stopped.',
    {
      code: 'deadline_exceeded',
      message: `The request took longer than ${defaultLimits.requestDeadlineMs} ms and was stopped.`,
    },
    requestIdHeader,
  ),
};

export const ref = (name: keyof typeof sharedResponses) => ({ $ref: `#/components/responses/${name}` });

/** The header components the responses refer to. */
export const headerComponents = {
  Allow: {
    description: 'The methods the path does allow, comma-separated (e.g. `GET`).',
    schema: { type: 'string' },
    example: 'GET',
  },
  RetryAfter: {
    description: 'Seconds to wait before retrying.',
    schema: { type: 'integer', minimum: 1 },
  },
  RateLimitPolicy: {
    description: 'The budget of this API key: points per window of `w` seconds.',
    schema: { type: 'string', pattern: '^\\d+;w=\\d+$' },
    example: `${defaultLimits.rateLimitPoints};w=${defaultLimits.rateLimitWindowSeconds}`,
  },
  RateLimitLimit: {
    description: 'Points this API key may spend per window (a request spends its cost).',
    schema: { type: 'integer', minimum: 1 },
  },
  RateLimitRemaining: {
    description: 'Points left in the current window.',
    schema: { type: 'integer', minimum: 0 },
  },
  RateLimitReset: {
    description: 'Seconds until the window resets.',
    schema: { type: 'integer', minimum: 1 },
  },
  RequestId: {
    description: 'Id of this request (also `request_id` in error bodies); quote it when reporting a problem.',
    schema: { type: 'string' },
  },
};
