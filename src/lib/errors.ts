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
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'rate_limited'
  | 'internal_error';

const statusOf: Record<ErrorCode, number> = {
  invalid_request: 400,
  validation_failed: 422,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  rate_limited: 429,
  internal_error: 500,
};

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
  // Parse, validation and variable-coercion errors have no path; Yoga's and SOFA's request errors
  // carry an HTTP status. An execution error without an original one (a non-null field that
  // resolved to null) has a path: that is ours, not the client's.
  if (
    err instanceof GraphQLError &&
    (err.extensions?.http !== undefined || (!err.originalError && !err.path))
  ) {
    const code = err.extensions?.code;
    return new AppError(
      isErrorCode(code) && code !== 'internal_error' ? code : 'invalid_request',
      err.message,
    );
  }
  requestLogger().error(
    { err: err instanceof GraphQLError ? (err.originalError ?? err) : err },
    'unhandled error',
  );
  return new AppError('internal_error', INTERNAL_MESSAGE);
}
