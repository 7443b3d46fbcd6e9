import { GraphQLError } from 'graphql';
import { requestLogger } from './request-context.ts';

/**
 * The one error type of the service. Services throw it; the GraphQL layer puts `code` in
 * `extensions.code`, the REST layer answers `{error: {code, message, param?, request_id}}` with
 * `status`. Anything else that escapes is logged and masked as 500 internal_error.
 */
export type ErrorCode =
  | 'invalid_request'
  | 'validation_failed'
  | 'unauthenticated'
  | 'forbidden'
  | 'test_mode_only'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'precondition_failed'
  | 'payload_too_large'
  | 'query_too_complex'
  | 'response_too_large'
  | 'rate_limited'
  | 'internal_error'
  | 'service_unavailable'
  | 'network_not_configured'
  | 'deadline_exceeded';

const statusOf: Record<ErrorCode, number> = {
  invalid_request: 400,
  validation_failed: 422,
  unauthenticated: 401,
  forbidden: 403,
  test_mode_only: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  precondition_failed: 412,
  payload_too_large: 413,
  query_too_complex: 400,
  response_too_large: 400,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
  network_not_configured: 503,
  deadline_exceeded: 504,
};

/** Every error code with its HTTP status, for documents (OpenAPI). */
export const errorStatuses: Readonly<Record<ErrorCode, number>> = statusOf;

/** Whether a string is one of our error codes (as opposed to, say, graphql-js's own). */
export const isErrorCode = (code: unknown): code is ErrorCode => typeof code === 'string' && code in statusOf;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly param?: string;
  readonly details?: Record<string, unknown>;

  constructor(
    code: ErrorCode,
    message: string,
    opts: { param?: string; details?: Record<string, unknown> } = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.status = statusOf[code];
    this.param = opts.param;
    this.details = opts.details;
  }
}

export const notFound = (what: string, id: string) =>
  new AppError('not_found', `No ${what} with id '${id}'.`);

export const invalid = (param: string, message: string) =>
  new AppError('validation_failed', message, { param });

/** Finds the AppError behind a GraphQL error (graphql-js wraps resolver errors in originalError). */
export function findAppError(err: unknown): AppError | undefined {
  let cur: any = err;
  for (let i = 0; i < 5 && cur; i++) {
    if (cur instanceof AppError) return cur;
    cur = cur.originalError;
  }
  return undefined;
}

export const INTERNAL_MESSAGE = 'Something went wrong on our side. Quote the request_id when reporting it.';

/**
 * Whatever was thrown → the AppError a client sees; each transport maps only AppErrors
 * (src/rest/errors.ts, src/server/graphql-errors.ts). GraphQL errors that describe the client's
 * document or parameters (parse, validation, SOFA's argument coercion) are `invalid_request`.
 * Anything else is logged with the request id and masked as `internal_error`.
 */
export function toAppError(err: unknown): AppError {
  const app = findAppError(err);
  if (app) return app;
  const fault = databaseFault(err);
  if (fault) {
    requestLogger().warn({ err }, 'database fault');
    return fault === 'timeout'
      ? new AppError('deadline_exceeded', 'The request took too long in the database and was stopped.')
      : new AppError(
          'service_unavailable',
          'The database is unreachable at the moment; retry after the time in Retry-After.',
        );
  }
  // Parse, validation and variable-coercion errors have no path; Yoga's and SOFA's request errors
  // carry an HTTP status. An execution error without an original one (a non-null field that
  // resolved to null) has a path: that is ours, not the client's.
  if (
    err instanceof GraphQLError &&
    (err.extensions?.http !== undefined || (!err.originalError && !err.path))
  ) {
    const { code, request_id: _id, http: _http, doc_url: _doc, param, ...details } = err.extensions ?? {};
    const ours = isErrorCode(code) && code !== 'internal_error';
    return new AppError(ours ? code : 'invalid_request', err.message, {
      // Our own error re-read (after a pass through Yoga) keeps its param and figures.
      ...(ours && typeof param === 'string' ? { param } : {}),
      ...(ours && Object.keys(details).length ? { details } : {}),
    });
  }
  requestLogger().error(
    { err: err instanceof GraphQLError ? (err.originalError ?? err) : err },
    'unhandled error',
  );
  return new AppError('internal_error', INTERNAL_MESSAGE);
}

/** Seconds a client is asked to wait (Retry-After) after a 503 service_unavailable. */
export const RETRY_AFTER_UNAVAILABLE = '5';

/** SQLSTATE classes and codes of a database that cannot serve (class 08: connection exception). */
const UNAVAILABLE_STATES = /^(08|57P0[1-3]|53300|3D000)/;
const UNAVAILABLE_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
]);
const UNAVAILABLE_MESSAGES =
  /timeout exceeded when trying to connect|Connection terminated|Client has encountered a connection error|Query read timeout|Connection ended unexpectedly/i;

/**
 * Whether an error says the database could not serve the request ('unavailable': unreachable,
 * shutting down, out of connections, not answering) or stopped a statement at its timeout
 * ('timeout', SQLSTATE 57014). Looks through the wrappers of MikroORM, graphql-js and pg.
 */
export function databaseFault(err: unknown): 'unavailable' | 'timeout' | null {
  let cur: any = err;
  for (let i = 0; i < 6 && cur; i++) {
    const code = typeof cur.code === 'string' ? cur.code : undefined;
    if (code === '57014') return 'timeout';
    if (code && (UNAVAILABLE_STATES.test(code) || UNAVAILABLE_ERRNOS.has(code))) return 'unavailable';
    if (typeof cur.message === 'string' && UNAVAILABLE_MESSAGES.test(cur.message)) return 'unavailable';
    cur = cur.originalError ?? cur.cause ?? cur.previous;
  }
  return null;
}
