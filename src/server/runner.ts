import type { DocumentNode, ExecutionArgs, ExecutionResult, GraphQLError, GraphQLSchema } from 'graphql';
import { getOperationAST } from 'graphql';
import type { Clock } from '../lib/clock.ts';
import { AppError } from '../lib/errors.ts';
import {
  authenticated,
  newRequest,
  type RequestContext,
  type RequestInfo,
  runRequest,
} from '../lib/request-context.ts';
import { checkCost } from '../schema/cost.ts';
import type { AppDeps } from './context.ts';
import { settleRateLimit } from './context.ts';
import type { OperationParams, Yoga } from './executor.ts';
import { toGraphQLError } from './graphql-errors.ts';

/**
 * The one operation runner: a credential, an operation, a deadline, a budget. Whatever carries
 * the operation, the same steps run in the same order, through the one GraphQL pipeline
 * (src/server/executor.ts: Yoga's envelop, its parse and validation caches, the limit plugins,
 * the compiled executor, the error mapping):
 * 1. the credential is authenticated (src/server/context.ts), before anything is parsed;
 * 2. the document is parsed and validated (tokens, depth, aliases, directives: graphql-limits.ts);
 * 3. its cost is checked and spent from the key's budget (`chargeOperation`, before it runs);
 * 4. it runs within its deadline (`armDeadline`) and its response cap (`readBudget`).
 * HTTP's handler (src/server/app.ts) sets up 1 and 4 for its request itself, as it must answer
 * before reading a body, and shares `armDeadline`; REST routes (src/rest/direct.ts) and the
 * pipeline's plugins share `chargeOperation`; graphql-ws (src/server/websocket.ts) runs all of it
 * through `createOperationRunner`. Background work runs with `systemContext`: an explicit clinic,
 * the injected clock, no request.
 */

/**
 * Aborts a request's work after `ms` (src/lib/budget.ts reads `abortedBy`); `onExpire` answers
 * the client. Returns the timer, for `clearTimeout` (no closure made per request).
 */
export function armDeadline(
  scope: RequestInfo,
  ms: number,
  onExpire?: (err: AppError) => void,
): NodeJS.Timeout {
  return setTimeout(() => {
    const err = new AppError('deadline_exceeded', `The request took longer than ${ms} ms and was stopped.`);
    scope.abortedBy ??= err;
    onExpire?.(err);
  }, ms);
}

/**
 * Step 3: refuses an operation over the cost limit before it runs, and spends its cost from the
 * key's rate-limit budget (`rate_limited` when spent). One cost model for GraphQL and REST.
 */
export function chargeOperation(
  ctx: Pick<RequestContext, 'spend'>,
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown> | undefined,
  operationName: string | undefined | null,
  maxCost: number,
): Promise<void> {
  return ctx.spend(checkCost(schema, document, variables, operationName, maxCost));
}

/**
 * The context of work no client asked for (a delivery worker, the relay): a clinic's principal
 * with the given scopes, the injected clock, no request id of a client, no rate limit.
 */
export function systemContext(
  deps: Pick<AppDeps, 'em' | 'services'>,
  opts: {
    clinicId: number;
    clinicKind: 'dental' | 'veterinary';
    country: string;
    clock: Clock;
    scopes?: Iterable<string>;
  },
): RequestContext {
  const info = newRequest(opts.clock, () => {}, { clientAddress: 'system' });
  return authenticated(
    info,
    {
      keyId: 'system',
      clinicId: opts.clinicId,
      clinicKind: opts.clinicKind,
      country: opts.country,
      scopes: new Set(opts.scopes ?? []),
    },
    deps.em,
    false,
    async () => {},
    () => true,
    deps.services,
  );
}

export interface OperationRun {
  /** The credential, as an Authorization value (`Bearer <key>`). */
  credential: string | null;
  operation: OperationParams;
  clientAddress: string;
  /** A single result must come within this; a subscription's setup too (its replay then goes at the client's pace, src/services/events/live.ts). */
  deadlineMs: number;
  /** The response cap of a single result (src/lib/budget.ts). */
  maxResponseBytes: number;
}

/** An operation authenticated, parsed, validated: `run` charges its cost and executes it. */
export interface PreparedRun {
  subscription: boolean;
  /** The execution arguments (graphql-ws hands them back to run the operation). */
  args: ExecutionArgs;
  run(): Promise<ExecutionResult | AsyncIterable<ExecutionResult>>;
}

/** Steps 1 to 4 for transports that carry operations themselves (graphql-ws). */
export function createOperationRunner(yoga: Yoga, deps: AppDeps) {
  return async function prepare(op: OperationRun): Promise<readonly GraphQLError[] | PreparedRun> {
    const info = newRequest(deps.clock, () => {}, {
      clientAddress: op.clientAddress,
      maxResponseBytes: op.maxResponseBytes,
    });
    // Held open by its transport: the pipeline may run a subscription (HTTP refuses them).
    info.streaming = true;
    return runRequest(info, async () => {
      const request = {
        headers: { get: (name: string) => (name.toLowerCase() === 'authorization' ? op.credential : null) },
      };
      const enveloped = yoga.getEnveloped({ request, params: op.operation } as any);
      let contextValue: unknown;
      let document: DocumentNode;
      try {
        contextValue = await enveloped.contextFactory();
        document = enveloped.parse(op.operation.query);
      } catch (e) {
        await settleRateLimit().catch(() => {});
        return [toGraphQLError(e)];
      }
      const errors = enveloped.validate(enveloped.schema, document);
      if (errors.length) {
        // A document refused before execution still counts against the key (one point).
        await settleRateLimit().catch(() => {});
        return errors.map((e: unknown) => toGraphQLError(e));
      }
      const kind = getOperationAST(document, op.operation.operationName)?.operation;
      if (!kind)
        return [toGraphQLError(new AppError('invalid_request', 'No operation to run by that name.'))];
      const args = {
        schema: enveloped.schema,
        document,
        contextValue,
        variableValues: op.operation.variables,
        operationName: op.operation.operationName,
      };
      return {
        subscription: kind === 'subscription',
        args,
        run: () =>
          runRequest(info, async () => {
            const deadline = armDeadline(info, op.deadlineMs);
            try {
              return (await (kind === 'subscription'
                ? enveloped.subscribe(args)
                : enveloped.execute(args))) as ExecutionResult | AsyncIterable<ExecutionResult>;
            } finally {
              clearTimeout(deadline);
            }
          }),
      };
    });
  };
}
