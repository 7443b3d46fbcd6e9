import { AsyncLocalStorage } from 'node:async_hooks';

/** Per-request facts that code deep in a handler (SOFA's error handler, logs) needs. */
export interface RequestScope {
  requestId: string;
  keyId?: string;
  /** Sets a header of the response to come (rate-limit headers are known only after auth). */
  setHeader: (name: string, value: string) => void;
}

export const requestScope = new AsyncLocalStorage<RequestScope>();

export const currentRequestId = () => requestScope.getStore()?.requestId ?? 'req_unknown';
