import type { ErrorCode } from './errors.ts';

/** Where the error reference is served (src/server/error-reference.ts renders docs/errors.md there). */
export const ERROR_REFERENCE_PATH = '/errors';

/**
 * An error's `doc_url`: its code's anchor in the served reference, as a path relative to the
 * service's root (`/errors#validation_failed`). Not absolute: behind a proxy the service does not
 * know the origin its clients call, and the Host header is theirs to write; a client resolves the
 * path against the URL it called (docs/decisions.md, "Errors that teach").
 */
export const docUrlOf = (code: ErrorCode): string => `${ERROR_REFERENCE_PATH}#${code}`;
