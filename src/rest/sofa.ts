import type { GraphQLSchema } from 'graphql';
import { useSofa } from 'sofa-api';
import { restRoutes } from './routes.ts';

/**
 * SOFA over the Rest sub-graph, with the explicit route table: the source of the OpenAPI document
 * (src/rest/openapi.ts). It serves no request: each /v1 request is its route's operation
 * (src/rest/direct.ts), run by the one operation runner (src/server/runner.ts).
 */
export function createOpenApiSource(restSchema: GraphQLSchema) {
  return useSofa({
    basePath: '/v1',
    schema: restSchema,
    depthLimit: 3,
    routes: Object.fromEntries(
      restRoutes.map((r) => [
        `${r.method === 'GET' ? 'Query' : 'Mutation'}.${r.field}`,
        { method: r.method, path: r.path, responseStatus: r.status, tags: [r.tag], description: r.summary },
      ]),
    ),
    customScalars: {
      Limit: { type: 'integer', minimum: 1, maximum: 100, default: 25 },
      CommaList: { type: 'string' },
      JSON: {},
    },
    openAPI: { info: { title: 'clinic-gateway', version: '1.0.0' } },
    swaggerUI: { endpoint: false } as any,
  });
}
