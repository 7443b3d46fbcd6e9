import { redactCardData } from '../lib/card-numbers.ts';
import { docUrlOf } from '../lib/error-docs.ts';
import { type AppError, RETRY_AFTER_UNAVAILABLE } from '../lib/errors.ts';

/**
 * The REST mapping of the one error type:
 * `{error: {code, message, param?, request_id, doc_url, required_scopes?}}`.
 */
export interface ErrorBody {
  error: {
    code: string;
    message: string;
    param?: string;
    request_id: string;
    doc_url: string;
    required_scopes?: string[];
  };
}

export function errorBody(err: AppError, requestId: string): ErrorBody {
  // A message may quote what it refuses (a path segment, a query value): never a card number or
  // a security code (src/lib/card-numbers.ts).
  const body: ErrorBody = {
    error: {
      code: err.code,
      message: redactCardData(err.message),
      request_id: requestId,
      doc_url: docUrlOf(err.code),
    },
  };
  if (err.param) body.error.param = err.param;
  const scopes = err.details?.required_scopes;
  if (Array.isArray(scopes) && scopes.length) body.error.required_scopes = scopes as string[];
  return body;
}

/** Headers an error response carries besides the body. */
export function errorHeaders(err: AppError): Record<string, string> {
  return err.code === 'service_unavailable' ? { 'retry-after': RETRY_AFTER_UNAVAILABLE } : {};
}
