import { AsyncLocalStorage } from 'node:async_hooks';
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
