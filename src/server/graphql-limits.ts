import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesPlugin } from '@escape.tech/graphql-armor-max-directives';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import type { GraphQLError, ValidationContext } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { AppError } from '../lib/errors.ts';
import type { Limits } from '../lib/limits.ts';
import type { RequestContext } from '../lib/request-context.ts';
import { chargeOperation, limitExceeded } from '../schema/cost.ts';
import { settleRateLimit } from './context.ts';
import { toGraphQLError } from './graphql-errors.ts';

/**
 * The limits of a GraphQL operation, each refused before execution with `query_too_complex`
 * (HTTP 400) naming the limit and the operation's figure:
 * - tokens, while parsing (graphql-armor): bounds the work of parsing anything else;
 * - depth, aliases and directives, while validating (graphql-armor);
 * - cost, before executing (src/schema/cost.ts): it depends on the variables (`first: $n`).
 * The cost is then spent from the key's rate-limit budget. Field suggestions ("Did you mean …")
 * stay on, over HTTP and websockets alike (one pipeline): the schema is public (schema.graphql,
 * and introspection needs no key: src/server/introspection.ts), so hiding them hid nothing.
 */
export function graphqlLimitPlugins(limits: Limits): Plugin<any>[] {
  const reject = (limit: string, max: number) => (ctx: ValidationContext | null, err: GraphQLError) => {
    const found = /found (\d+)/.exec(err.message);
    const error = toGraphQLError(limitExceeded(limit, max, found ? Number(found[1]) : undefined));
    if (!ctx) throw error;
    ctx.reportError(error);
  };
  const common = { propagateOnRejection: false, exposeLimits: true };
  /**
   * Spends the operation's cost before it runs (a subscription's once, when it starts); a refusal
   * over a limit still counts one point, unless the refusal is the limit's.
   */
  const charged = async (
    args: any,
    stop: (result: { errors: GraphQLError[] }) => void,
    check?: () => void,
  ) => {
    try {
      check?.();
      await chargeOperation(
        args.contextValue as RequestContext,
        args.schema,
        args.document,
        args.variableValues as Record<string, unknown> | undefined,
        args.operationName,
        limits.graphqlMaxCost,
      );
    } catch (e) {
      await settleRateLimit().catch(() => {});
      stop({ errors: [toGraphQLError(e)] });
    }
  };
  return [
    maxTokensPlugin({
      ...common,
      n: limits.graphqlMaxTokens,
      onReject: [reject('tokens', limits.graphqlMaxTokens)],
    }),
    maxDepthPlugin({
      ...common,
      n: limits.graphqlMaxDepth,
      flattenFragments: true,
      onReject: [reject('depth', limits.graphqlMaxDepth)],
    }),
    maxAliasesPlugin({
      ...common,
      n: limits.graphqlMaxAliases,
      onReject: [reject('aliases', limits.graphqlMaxAliases)],
    }),
    maxDirectivesPlugin({
      ...common,
      n: limits.graphqlMaxDirectives,
      onReject: [reject('directives', limits.graphqlMaxDirectives)],
    }),
    {
      // A nesting deep enough to exhaust the parser's stack within the token limit is a depth
      // refusal, not an internal error.
      onParse:
        () =>
        ({ result, replaceParseResult }) => {
          if (result instanceof RangeError) {
            replaceParseResult(toGraphQLError(limitExceeded('depth', limits.graphqlMaxDepth)));
          }
        },
    },
    {
      onExecute: ({ args, setResultAndStopExecution }) => charged(args, setResultAndStopExecution),
      // A subscription is charged once, when it starts, as a query of the same selection would be.
      onSubscribe: ({ args, setResultAndStopExecution }) =>
        charged(args, setResultAndStopExecution, () => {
          if (!(args.contextValue as RequestContext).streaming)
            throw new AppError(
              'invalid_request',
              'Subscriptions are served over WebSocket (graphql-ws protocol) at /graphql: see docs/events.md, Subscriptions.',
            );
        }),
    },
  ];
}
