import { AsyncLocalStorage } from 'node:async_hooks';

/** Per-request facts that code deep in a handler (SOFA's error handler, logs) needs. */
export interface RequestScope {
  requestId: string;
  keyId?: string;
}

export const requestScope = new AsyncLocalStorage<RequestScope>();

export const currentRequestId = () => requestScope.getStore()?.requestId ?? 'req_unknown';
