import { AsyncLocalStorage } from 'node:async_hooks';
import { randomFillSync } from 'node:crypto';
import type { GraphQLContext } from '../schema/context.ts';

/** Per-request facts that code deep in a handler (SOFA's error handler, logs) needs. */
export interface RequestScope {
  requestId: string;
  keyId?: string;
  /** Sets a header of the response to come (rate-limit headers are known only after auth). */
  setHeader: (name: string, value: string) => void;
  /** A /v1 request's context, built before SOFA reads any parameter (so a 401 comes first). */
  restContext?: GraphQLContext;
}

export const requestScope = new AsyncLocalStorage<RequestScope>();

export const currentRequestId = () => requestScope.getStore()?.requestId ?? 'req_unknown';

// Random bytes are drawn a few kilobytes at a time: one system call per request showed in profiles.
const ID_BYTES = 9;
const pool = Buffer.alloc(ID_BYTES * 512);
let offset = pool.length;

/** `req_` and 12 random base64url characters (72 bits). */
export function newRequestId(): string {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  offset += ID_BYTES;
  return `req_${pool.toString('base64url', offset - ID_BYTES, offset)}`;
}
