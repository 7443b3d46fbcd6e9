import type { DocumentNode, ExecutionArgs, ExecutionResult, GraphQLError } from 'graphql';
import { getOperationAST } from 'graphql';
import type { Clock } from '../lib/clock.ts';
import { AppError } from '../lib/errors.ts';
import {
  currentRequest,
  newRequest,
  type RequestContext,
  type RequestInfo,
  runRequest,
} from '../lib/request-context.ts';
import { stopWrites } from '../lib/write-deadline.ts';
import type { RouteOperation } from '../rest/direct.ts';
import { chargeOperation } from '../schema/cost.ts';
import type { AppDeps } from './context.ts';
import { authenticateCredential, settleRateLimit } from './context.ts';
import { toGraphQLError } from './graphql-errors.ts';
import type { OperationParams, Yoga } from './pipeline-types.ts';

/**
 * The one operation runner: a credential, an operation, a deadline, a budget. HTTP GraphQL
 * (src/server/graphql.ts), REST (src/server/app.ts with src/rest/direct.ts) and graphql-ws
 * (src/server/websocket.ts) all run their operations through the runner `createApp` makes, in
 * the same steps:
 * 0. `begin`: the request's scope (request id, the injected clock, its client address, its
 *    response cap) and `armDeadline`, its deadline (HTTP arms it at arrival, as the body read
 *    counts too; graphql-ws per operation, until its first result);
 * 1. `authenticate`: the credential becomes a principal and counts against its rate limit, before
 *    anything is parsed;
 * 2. `prepare`: the document is parsed and validated through the one GraphQL pipeline (Yoga's
 *    envelop: tokens, depth, aliases, directives, src/server/graphql-limits.ts);
 * 3. its cost is checked and spent from the key's budget before it runs (`chargeOperation`: the
 *    pipeline's execute and subscribe steps for a document, `runRoute` for a REST route, whose
 *    operation is built ahead of time);
 * 4. it runs in its scope, its reads bounded by the deadline and the response cap (budget.ts).
 * Work no client asked for (the job queue's workers: src/server/jobs.ts) runs in `runSystem`'s
 * scope: the injected clock, no request, no credential. Nothing here reads an HTTP request.
 */

export interface Arrival {
  /** The peer's address (failed authentications are throttled by it). */
  clientAddress: string;
  /** Sets a header of the response to come (the rate-limit headers); none on a websocket. */
  setHeader?: RequestInfo['setHeader'];
  /** The response cap of a single result (src/lib/budget.ts). */
  maxResponseBytes?: number;
  /** Held open by its transport (graphql-ws): the pipeline may run a subscription. */
  streaming?: boolean;
}

/** An operation authenticated, parsed and validated: `run` charges its cost and executes it. */
export interface PreparedRun {
  subscription: boolean;
  /** The execution arguments (graphql-ws hands them back to run the operation). */
  args: ExecutionArgs;
  run(): Promise<ExecutionResult | AsyncIterable<ExecutionResult>>;
}

export interface OperationRunner {
  /** The one GraphQL pipeline the runner executes documents with (Yoga's HTTP fallback serves it too). */
  readonly yoga: Yoga;
  readonly deps: AppDeps;
  begin(arrival: Arrival): RequestInfo;
  armDeadline: typeof armDeadline;
  /** Step 1; once per request (a later call answers the same context). */
  authenticate(info: RequestInfo, credential: string | null, rest: boolean): Promise<RequestContext>;
  /**
   * Step 2 for a GraphQL document: its parse and validation errors (mapped, one point spent), or
   * the run. `deadlineMs` bounds the run until its first result (graphql-ws); HTTP's request
   * deadline is armed at arrival instead.
   */
  prepare(
    ctx: RequestContext,
    operation: OperationParams,
    deadlineMs?: number,
  ): Promise<readonly GraphQLError[] | PreparedRun>;
  /** Steps 3 and 4 for a REST route: its cost spent, then its run. */
  runRoute(ctx: RequestContext, operation: RouteOperation): Promise<unknown>;
}

const noHeaders = () => {};

/** Runs `fn` in `info`'s scope, without entering it again when it is current (HTTP's). */
const inScope = <T>(info: RequestInfo, fn: () => T): T =>
  currentRequest() === info ? fn() : runRequest(info, fn);

export function createOperationRunner(yoga: Yoga, deps: AppDeps): OperationRunner {
  const maxCost = deps.limits.graphqlMaxCost;
  // The pipeline's context is the request's, authenticated in step 1: no credential is read there.
  const noCredential = { headers: { get: () => null } };
  return {
    yoga,
    deps,
    armDeadline,
    begin(arrival) {
      const info = newRequest(deps.clock, arrival.setHeader ?? noHeaders, {
        clientAddress: arrival.clientAddress,
        ...(arrival.maxResponseBytes ? { maxResponseBytes: arrival.maxResponseBytes } : {}),
        ...(deps.publicUrl ? { publicUrl: deps.publicUrl } : {}),
      });
      if (arrival.streaming) info.streaming = true;
      return info;
    },
    authenticate(info, credential, rest) {
      // Once per request: the credential is the one it was authenticated with (HTTP reads it
      // before the body, and its pipeline's context is this request's).
      if ('principal' in info) return Promise.resolve(info as RequestContext);
      // In the request's scope: a refusal's error and a database fault's log carry its id.
      return inScope(info, () => authenticateCredential(deps, info, credential, rest));
    },
    prepare(ctx, operation, deadlineMs) {
      return inScope(ctx, async () => {
        const enveloped = yoga.getEnveloped({ request: noCredential, params: operation } as any);
        let contextValue: unknown;
        let document: DocumentNode;
        try {
          contextValue = await enveloped.contextFactory();
          document = enveloped.parse(operation.query);
        } catch (e) {
          // A document refused before execution still counts against the key (one point).
          await settleRateLimit().catch(() => {});
          return [toGraphQLError(e)];
        }
        const errors = enveloped.validate(enveloped.schema, document);
        if (errors.length) {
          await settleRateLimit().catch(() => {});
          return errors.map((e: unknown) => toGraphQLError(e));
        }
        const kind = getOperationAST(document, operation.operationName)?.operation;
        if (!kind)
          return [toGraphQLError(new AppError('invalid_request', 'No operation to run by that name.'))];
        ctx.operationType = kind;
        const args: ExecutionArgs = {
          schema: enveloped.schema,
          document,
          contextValue,
          variableValues: operation.variables,
          operationName: operation.operationName,
        };
        const subscription = kind === 'subscription';
        const execute = () =>
          (subscription ? enveloped.subscribe(args) : enveloped.execute(args)) as Promise<
            ExecutionResult | AsyncIterable<ExecutionResult>
          >;
        return {
          subscription,
          args,
          run: () =>
            inScope(ctx, async () => {
              if (deadlineMs === undefined) return execute();
              const deadline = armDeadline(ctx, deadlineMs);
              try {
                return await execute();
              } finally {
                clearTimeout(deadline);
              }
            }),
        };
      });
    },
    async runRoute(ctx, operation) {
      // As a GraphQL execution of its field would: the cost is spent first, then the field's
      // scopes are checked.
      await chargeOperation(
        ctx,
        operation.schema,
        operation.document,
        operation.variables,
        operation.operationName,
        maxCost,
      );
      return operation.run(ctx);
    },
  };
}

/**
 * Aborts a request's work after `ms` (src/lib/budget.ts reads `abortedBy`); `onExpire` answers
 * the client. Returns the timer, for `clearTimeout` (no closure made per request).
 *
 * A 504 means nothing was written (src/lib/write-deadline.ts): its writes are stopped first (a
 * transaction not yet committing can then only roll back), and a commit already under way is
 * waited for. A request that committed a write answers what it did, not the 504.
 */
export function armDeadline(
  scope: RequestInfo,
  ms: number,
  onExpire?: (err: AppError) => void,
): NodeJS.Timeout {
  return setTimeout(() => {
    const err = new AppError('deadline_exceeded', `The request took longer than ${ms} ms and was stopped.`);
    const expire = () => {
      if (scope.commits) return;
      scope.abortedBy ??= err;
      onExpire?.(err);
    };
    const committing = stopWrites(scope, err);
    if (committing) void committing.then(expire);
    else expire();
  }, ms);
}

/**
 * The scope of work no client asked for (a job queue worker: src/server/jobs.ts): the injected
 * clock (`clockNow()`, the time its writes record), a request id for its log lines, no request,
 * no credential, no rate limit. Unlike a request, it does not happen at one instant (a batch of
 * attempts takes seconds): its time is read from the clock each time it is asked for.
 */
export function runSystem<T>(clock: Clock, fn: () => Promise<T>): Promise<T> {
  const info = newRequest(clock, noHeaders, { clientAddress: 'system' });
  Object.defineProperty(info, 'timeMs', { get: () => clock.now().getTime() });
  return runRequest(info, fn);
}
