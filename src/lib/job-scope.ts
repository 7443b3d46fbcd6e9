import type { Logger } from 'pino';
import { logger } from './logger.ts';
import { currentRequest, type RequestInfo, runRequest } from './request-context.ts';

/**
 * A job carries the id of the request that queued it (`requestId` in its data, added where every
 * job is created: src/lib/job-queue.ts), and its worker runs it in a scope with that id, so the
 * worker's log lines for the job (a delivery attempt, a chat send) name the request a client
 * saw in its `x-request-id`. A job queued by a job (a retry, a send stepping back) keeps it.
 */
export interface QueuedBy {
  /** The request that queued the job (or the job before it), when one did. */
  requestId?: string;
}

/** `data` with the current request's id, unless it carries one already or no request is under way. */
export function stampRequestId<T>(data: T): T {
  if (!data || typeof data !== 'object' || 'requestId' in data) return data;
  const scope = currentRequest();
  return scope ? { ...data, requestId: scope.requestId } : data;
}

/**
 * Runs one job's work as the request that queued it: the worker's scope (its clock, its time)
 * with the job's request id and a logger that writes it. Without an id, in the worker's scope.
 */
export function asQueuedBy<T>(job: QueuedBy, fn: () => T): T {
  const outer = currentRequest();
  const { requestId } = job;
  if (!outer || !requestId) return fn();
  let log: Logger | undefined;
  // The worker's scope underneath: its clock, and `timeMs` read from it each time.
  const scope: RequestInfo = Object.create(outer, {
    requestId: { value: requestId, enumerable: true },
    log: {
      get() {
        log ??= logger.child({ request_id: requestId });
        return log;
      },
    },
  });
  return runRequest(scope, fn);
}

/** The logger of the scope under way (its lines carry its request id), else the process's. */
export const scopeLog = (): Logger => currentRequest()?.log ?? logger;
