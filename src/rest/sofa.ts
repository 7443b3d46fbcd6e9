import type { ExecutionArgs, GraphQLSchema, OperationDefinitionNode } from 'graphql';
import { useSofa } from 'sofa-api';
import { compiledExecute } from '../lib/compiled-execute.ts';
import { currentRequestId, type RequestContext } from '../lib/request-context.ts';
import { errorBody, restError } from './errors.ts';
import { pruneRestResult } from './prune.ts';
import { restRoutes } from './routes.ts';

function rootFieldOf(args: ExecutionArgs): string {
  const op = args.document.definitions[0] as OperationDefinitionNode;
  return (op.selectionSet.selections[0] as any).name.value;
}

/** Runs the Rest operation and removes the fields the request did not ask for (see prune.ts). */
async function executeAndPrune(args: ExecutionArgs) {
  const result = await compiledExecute(args);
  if (!result.errors && result.data) {
    const field = rootFieldOf(args);
    pruneRestResult(
      args.schema,
      field,
      (args.variableValues ?? {}) as Record<string, unknown>,
      (result.data as any)[field],
    );
  }
  return result;
}

export function errorResponse(errors: readonly unknown[]): Response {
  const err = restError(errors);
  return Response.json(errorBody(err, currentRequestId()), { status: err.status });
}

/** SOFA over the Rest sub-graph, mounted at /v1 with the explicit route table. */
export function createRestRouter(
  restSchema: GraphQLSchema,
  contextFor: (request: Request) => Promise<RequestContext>,
) {
  return useSofa({
    basePath: '/v1',
    schema: restSchema,
    depthLimit: 3,
    execute: executeAndPrune as any,
    routes: Object.fromEntries(
      restRoutes.map((r) => [
        `Query.${r.field}`,
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
