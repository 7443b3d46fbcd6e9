import { RequestCache } from '@pothos/plugin-scope-auth';
import type { GraphQLSchema } from 'graphql';
import { createYoga, type YogaInitialContext } from 'graphql-yoga';
import { compiledExecute } from '../lib/compiled-execute.ts';
import { AppError, isErrorCode } from '../lib/errors.ts';
import { currentRequest, type RequestContext, shareEm } from '../lib/request-context.ts';
import { type AppDeps, settleRateLimit } from './context.ts';
import { toGraphQLError } from './graphql-errors.ts';
import { graphqlLimitPlugins } from './graphql-limits.ts';
import { introspectionCachePlugin } from './introspection-cache.ts';
import type { Yoga } from './pipeline-types.ts';

/**
 * The one GraphQL pipeline: Yoga's envelop with our plugins. The operation runner runs it
 * (src/server/runner.ts: the direct POST path, graphql-ws), and so does Yoga's own HTTP handling
 * for what the direct path hands it: the same parser and validation caches, the same limits and
 * cost, the same compiled executor and the same error mapping whichever way a request arrives.
 * Its context is the request's, authenticated by the runner before anything is parsed.
 */
export function createGraphQLPipeline(schema: GraphQLSchema, deps: AppDeps): Yoga {
  return createYoga<Record<string, unknown>, RequestContext>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    // CORS is answered for every route in one place (src/server/cors.ts).
    cors: false,
    // The console is served before Yoga sees the request, as a small page and cacheable files
    // (src/server/graphiql.ts).
    graphiql: false,
    logging: false,
    plugins: [
      ...graphqlLimitPlugins(deps.limits),
      {
        onExecute: ({ setExecuteFn, args }: any) => {
          setExecuteFn(compiledExecute);
          return {
            // Pothos' scope-auth keeps a request's results in a WeakMap keyed by its context. V8's
            // young-generation collections keep such an entry, and with it the whole request
            // (rows, pages, the context), until the next full collection: about 1 MB surviving
            // each scavenge on the benchmark's GraphQL page. Dropped once the result is made.
            onExecuteDone: () => RequestCache.clearForContext(args.contextValue),
          };
        },
      },
      // After the cost is spent, before anything executes (src/server/introspection.ts); after
      // the executor is set, which a new answer wraps to know when it is made.
      introspectionCachePlugin(deps.limits.anonymousBytesPerWindow),
      {
        // Parse and validation errors skip masking; give them our code too. A limit reported
        // during validation gets its 400 back (Yoga marks validation errors 200 for JSON).
        async onResultProcess({ result, setResult }: { result: any; setResult: (r: any) => void }) {
          if (!result || Array.isArray(result) || !Array.isArray(result.errors)) return;
          // A document refused before execution still counts against the key (one point).
          await settleRateLimit().catch(() => {});
          const settled = (e: any) =>
            isErrorCode(e?.extensions?.code) &&
            (e.extensions.code !== 'query_too_complex' || !e.extensions.http?.spec);
          if (result.errors.every(settled)) return;
          setResult({ ...result, errors: result.errors.map((e: unknown) => toGraphQLError(e)) });
        },
      } as any,
    ],
    maskedErrors: { maskError: (error) => toGraphQLError(error) },
    // The request's context, authenticated by the operation runner before anything was parsed
    // (src/server/runner.ts; HTTP requests handed to Yoga were authenticated by graphql.ts).
    context: (initial: Omit<YogaInitialContext, 'request'>) => {
      const ctx = currentRequest();
      if (!ctx || !('principal' in ctx))
        throw toGraphQLError(new AppError('unauthenticated', 'The request was not authenticated.'));
      // The pipeline copies the request context's enumerable properties into its own context;
      // the request's EntityManager stays forked on first use (request-context.ts).
      shareEm(initial, ctx as RequestContext);
      return ctx as RequestContext;
    },
  });
}
