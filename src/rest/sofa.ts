import { type ExecutionArgs, GraphQLError, type GraphQLSchema } from 'graphql';
import { useSofa } from 'sofa-api';
import { compiledExecute } from '../lib/compiled-execute.ts';
import type { Limits } from '../lib/limits.ts';
import { currentRequestId, type RequestContext } from '../lib/request-context.ts';
import { checkCost } from '../schema/cost.ts';
import { errorBody, errorHeaders, restError } from './errors.ts';
import { restRoutes } from './routes.ts';

/**
 * Spends the operation's cost (the one cost model, src/schema/cost.ts), then runs it. SOFA serves
 * the POST routes only (GET routes: rest/direct.ts), whose results are whole.
 */
async function execute(args: ExecutionArgs, limits: Limits) {
  const vars = (args.variableValues ?? {}) as Record<string, unknown>;
  try {
    const cost = checkCost(args.schema, args.document, vars, args.operationName, limits.graphqlMaxCost);
    await (args.contextValue as RequestContext).spend(cost);
  } catch (e) {
    return {
      errors: [
        e instanceof GraphQLError ? e : new GraphQLError((e as Error).message, { originalError: e as Error }),
      ],
    };
  }
  return compiledExecute(args);
}

export function errorResponse(errors: readonly unknown[]): Response {
  const err = restError(errors);
  return Response.json(errorBody(err, currentRequestId()), {
    status: err.status,
    headers: errorHeaders(err),
  });
}

/** SOFA over the Rest sub-graph, mounted at /v1 with the explicit route table. */
export function createRestRouter(
  restSchema: GraphQLSchema,
  contextFor: (request: Request) => Promise<RequestContext>,
  limits: Limits,
) {
  return useSofa({
    basePath: '/v1',
    schema: restSchema,
    depthLimit: 3,
    execute: ((args: ExecutionArgs) => execute(args, limits)) as any,
    routes: Object.fromEntries(
      restRoutes.map((r) => [
        `${r.method === 'GET' ? 'Query' : 'Mutation'}.${r.field}`,
        { method: r.method, path: r.path, responseStatus: r.status, tags: [r.tag], description: r.summary },
      ]),
    ),
    context: ({ request }) => contextFor(request as unknown as Request),
    errorHandler: (errors) => errorResponse(errors) as any,
    customScalars: {
      Limit: { type: 'integer', minimum: 1, maximum: 100, default: 25 },
      CommaList: { type: 'string' },
      JSON: {},
    },
    openAPI: { info: { title: 'clinic-gateway', version: '1.0.0' } },
    swaggerUI: { endpoint: false } as any,
  });
}
