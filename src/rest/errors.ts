import { GraphQLError } from 'graphql';
import { AppError, findAppError } from '../lib/errors.ts';
import { logger } from '../lib/logger.ts';

export interface ErrorBody {
  error: { code: string; message: string; param?: string; request_id: string; required_scopes?: string[] };
}

export function errorBody(err: AppError, requestId: string): ErrorBody {
  const body: ErrorBody = { error: { code: err.code, message: err.message, request_id: requestId } };
  if (err.param) body.error.param = err.param;
  const scopes = err.details?.required_scopes;
  if (Array.isArray(scopes) && scopes.length) body.error.required_scopes = scopes as string[];
  return body;
}

/**
 * The REST answer for whatever went wrong: AppErrors keep their status and code. SOFA's own
 * errors (bad JSON body, argument coercion) are 400 invalid_request. Anything else is logged and
 * masked as 500 internal_error, so no internal message reaches a client.
 */
export function toAppError(errors: readonly unknown[], requestId: string): AppError {
  // The most severe client error wins when several fields fail (e.g. 403 on one, 404 on another).
  const apps = errors.map(findAppError).filter((e): e is AppError => !!e);
  if (apps.length) return apps.sort((a, b) => rank(a) - rank(b))[0];
  const first = errors[0] as any;
  if (first instanceof GraphQLError && !first.originalError && first.extensions?.http) {
    return new AppError('invalid_request', first.message);
  }
  if (first instanceof GraphQLError && first.extensions?.http?.status === 400) {
    return new AppError('invalid_request', first.message);
  }
  logger.error({ err: first?.originalError ?? first, request_id: requestId }, 'unhandled error');
  return new AppError(
    'internal_error',
    'Something went wrong on our side. Quote the request_id when reporting it.',
  );
}

const order = [
  'unauthenticated',
  'forbidden',
  'not_found',
  'validation_failed',
  'invalid_request',
  'conflict',
];
const rank = (e: AppError) => {
  const i = order.indexOf(e.code);
  return i < 0 ? order.length : i;
};
