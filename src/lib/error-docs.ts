import type { ErrorCode } from './errors.ts';
import { currentRequest } from './request-context.ts';

/** Where the error reference is served (src/server/error-reference.ts renders docs/errors.md there). */
export const ERROR_REFERENCE_PATH = '/errors';

/**
 * An error's `doc_url`: its code's anchor in the served reference. Absolute when the deployment
 * says where clients reach the service (PUBLIC_URL, the request's `publicUrl`); else a path from
 * the service's root (`/errors#validation_failed`), never built from the Host header, which is
 * the client's to write: a client resolves it against the URL it called (docs/decisions.md,
 * "Errors that teach").
 */
export const docUrlOf = (code: ErrorCode): string =>
  `${currentRequest()?.publicUrl ?? ''}${ERROR_REFERENCE_PATH}#${code}`;
