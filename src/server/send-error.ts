import type { ServerResponse } from 'node:http';
import type { AppError } from '../lib/errors.ts';
import { currentRequestId } from '../lib/request-context.ts';
import { errorBody, errorHeaders } from '../rest/errors.ts';

/**
 * Answers `err` with the JSON error body every route uses (src/rest/errors.ts), for the handlers
 * that write their own responses (the pages and their files): a client reads one error shape,
 * with its request id and doc_url, whichever path it called.
 */
export function sendError(res: ServerResponse, err: AppError, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(errorBody(err, currentRequestId()));
  res.writeHead(err.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    ...errorHeaders(err),
    ...headers,
  });
  res.end(body);
}
