import type { GraphQLSchema } from 'graphql';
import { defaultLimits } from '../lib/limits.ts';
import { schemas } from '../schema/index.ts';
import { operation } from './openapi-operation.ts';
import { headerComponents, sharedResponses } from './openapi-responses.ts';
import { componentSchemas, reachableSchemas } from './openapi-schemas.ts';
import { type RestRoute, restRoutes } from './routes.ts';
import { webhookParameters, webhooksSection } from './webhooks-section.ts';

/**
 * The /v1 OpenAPI document: SOFA's (fets') generated document, fixed up.
 *
 * SOFA's document is the source of the operations' parameters and success schemas and of the
 * component schemas; it is then corrected against the route table (paths, methods, operationId,
 * tag, summary) and the Rest GraphQL schema (nullability, list items, scopes):
 *
 * - OpenAPI 3.1: nullable fields are `type: [T, "null"]`, nullable objects `anyOf: [$ref, null]`.
 *   SOFA selects every field of a route's type, so every key is always in the body (null when
 *   empty) and `required` lists them all, nullable or not. Only the keys of groups a request may
 *   leave out (the detailed patient fields, owner, species: presenters give the requested groups'
 *   fields only) are optional.
 * - Full paths (`/v1/patients/{id}`), no server prefix, only the routes of the table (no SOFA
 *   /webhook), one parameter per name, path parameters in the path, the rest in the query, with
 *   the schema of what the services accept.
 * - Error responses share one `Error` schema (src/rest/errors.ts). Unreferenced component
 *   schemas (Query, ...) are dropped and the rest sorted, so the output is deterministic.
 * - Responses shared by every operation (401, 405, 429, 500, 503, 504) are response components;
 *   every response to an authenticated request carries the RateLimit headers. A known path with
 *   another method is a 405 with `Allow` (src/server/app.ts), referenced by each operation.
 * - Parameters say what the server enforces: id patterns per kind, enums for `include` and
 *   `response_format`, the cursor's alphabet, the page size range.
 */
export function openApiDocument(
  router: any,
  restSchema: GraphQLSchema = schemas().restSchema,
): Record<string, any> {
  const sofa = structuredClone(router.openAPIDocument) as Record<string, any>;
  const queryFields = restSchema.getQueryType()?.getFields() ?? {};
  const mutationFields = restSchema.getMutationType()?.getFields() ?? {};

  const converted = componentSchemas(sofa.components?.schemas ?? {}, restSchema);

  // After the component schemas are complete: each envelope's `data` refers to one of them.
  const webhooks = webhooksSection(converted);

  const paths: Record<string, any> = {};
  for (const route of restRoutes) {
    const path = `/v1${oasPath(route.path)}`;
    const method = route.method.toLowerCase();
    const source = findSofaOperation(sofa, route);
    if (!source)
      throw new Error(
        `openapi: SOFA generated no ${route.method} ${route.path} (Rest field ${route.field}).`,
      );
    const field = (route.method === 'GET' ? queryFields : mutationFields)[route.field];
    paths[path] ??= {};
    paths[path][method] = operation(route, path, source, field, converted);
  }

  return {
    openapi: '3.1.0',
    info: {
      title: sofa.info?.title ?? 'clinic-gateway',
      version: sofa.info?.version ?? '1.0.0',
      description: infoDescription,
      contact: { name: 'clinic-gateway API support', url: 'https://github.com/clinic-gateway' },
      license: { name: 'Proprietary', url: 'https://github.com/clinic-gateway' },
    },
    // Relative: the document describes whichever host serves it (paths carry /v1).
    servers: [{ url: '/', description: 'The server that serves this document.' }],
    tags: [...new Set(restRoutes.map((r) => r.tag))].map((name) => ({
      name,
      description: tagDescriptions[name] ?? name,
    })),
    security: [{ bearerAuth: [] }],
    paths,
    webhooks,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'An API key of the clinic: `Authorization: Bearer <API_KEY>`. Each key has scopes.',
        },
      },
      headers: headerComponents,
      responses: sharedResponses,
      parameters: webhookParameters,
      schemas: reachableSchemas([paths, sharedResponses, webhooks], converted),
    },
  };
}

const infoDescription = [
  'REST API of clinic-gateway. Every path lives under `/v1`; the same data is also served as GraphQL at `/graphql`.',
  '',
  'Authenticate with `Authorization: Bearer <API_KEY>`. Keys are scoped: each operation names the scopes it needs,',
  'and a key without one gets 403 with the missing scopes in `error.required_scopes`.',
  '',
  'Single objects come as `{data}`. Paginated lists come as `{data, next_cursor}`: pass `next_cursor` back verbatim as',
  '`cursor` for the next page; it is null on the last page. `limit` is 1 to 100 (default 25). Bounded lists (catalog)',
  'return everything as `{data}`.',
  '',
  'Errors are `{"error": {"code", "message", "param"?, "request_id", "required_scopes"?}}`.',
  'A query parameter that an operation does not take is a 422 `validation_failed` naming it in `param`',
  '(a misspelt filter never widens a search).',
  '',
  `Each API key has a budget of points per window (${defaultLimits.rateLimitPoints} per ${defaultLimits.rateLimitWindowSeconds} s unless the operator sets another),`,
  'REST and GraphQL together; a request spends its cost, about one point per record it reads (a page of 25 patients',
  'about 100). Every authenticated response carries `RateLimit-Policy`, `RateLimit-Limit`, `RateLimit-Remaining`',
  'and `RateLimit-Reset`; over the budget the answer is 429 `rate_limited` with `Retry-After`.',
  '',
  `While the database is unreachable the answer is 503 \`service_unavailable\` with \`Retry-After\`; a request that runs`,
  `longer than its deadline (${defaultLimits.requestDeadlineMs / 1000} s unless the operator sets another) is 504 \`deadline_exceeded\`.`,
  '',
  'Only the documented methods of each path are served: any other method on a documented path is 405',
  '`method_not_allowed` with an `Allow` header naming the allowed methods, before authentication',
  '(`#/components/responses/MethodNotAllowed`). An undocumented path under `/v1` is 404 `not_found`.',
  'An empty query parameter, or one given twice (lists such as `include` excepted), is a 422 naming it.',
].join('\n');

const tagDescriptions: Record<string, string> = {
  Patients: 'Patients (animals at veterinary clinics) and their appointments, treatments and payments.',
  Catalog:
    'Reference data of the clinic: bounded lists (no cursor) of the entries still offered, each entry by id, and their writes (create, change, disable, enable).',
  Calls:
    "Calls the clinic's phone system reports (scope calls:write), then their recording and transcript; read with calls:read.",
  Availability:
    "Providers' weekly working hours (read and replaced whole) and the free slots computed from them in the clinic's time zone; bounded lists, no cursor.",
  Events:
    'The outbox: every event the clinic recorded, in the envelope webhooks deliver, kept for 30 days by default (scope webhooks:manage; chat.* events also need chat:read).',
};

/** `/patients/:id` → `/patients/{id}`. */
function oasPath(path: string): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

/** SOFA's operation for a route: fets keys paths without the base path, `{param}` form. */
function findSofaOperation(sofa: Record<string, any>, route: RestRoute): any {
  const method = route.method.toLowerCase();
  const p = oasPath(route.path);
  for (const candidate of [p, `/v1${p}`, route.path, `/v1${route.path}`]) {
    const op = sofa.paths?.[candidate]?.[method];
    if (op) return op;
  }
  return undefined;
}
