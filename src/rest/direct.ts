import { buildOperationNodeForField } from '@graphql-tools/utils';
import {
  type DocumentNode,
  type GraphQLField,
  type GraphQLSchema,
  getNamedType,
  Kind,
  OperationTypeNode,
} from 'graphql';
import { fieldRefusal } from '../auth/access.ts';
import type { RequestContext } from '../lib/request-context.ts';
import type { RestRoute } from './routes.ts';

/**
 * Every /v1 route, GET or write, without SOFA's request cycle (SOFA generates the OpenAPI document from the
 * same Rest schema: src/rest/sofa.ts). Each route is still its Rest field, a query for GET and
 * a mutation for POST, PUT, PATCH and DELETE: the
 * same resolver (the function the schema was built with), the same arguments, the cost of the
 * same operation SOFA documents for it (built the way SOFA builds it) and the scopes its field
 * names (decided by src/auth/access.ts, as for GraphQL). Only the conversions around it are gone (a fetch Request from the node request, a
 * query-string parse per argument, the GraphQL execution that copies the presented resources
 * field by field into new objects, a fetch Response back): presenters give the requested groups' fields
 * only, so nothing is removed afterwards, and a write answers exactly what its event carries.
 * test/resource-parity.test.ts and test/openapi.test.ts hold what the routes return to the Rest
 * schema. A route's operation is run by the one operation runner (src/server/runner.ts,
 * `runRoute`), which spends its cost first.
 */
interface Prepared {
  document: DocumentNode;
  operationName: string | undefined;
  resolve: (root: unknown, args: Record<string, unknown>, ctx: RequestContext, info: unknown) => unknown;
  authScopes: unknown;
  inPath: string[];
  query: { name: string; list: boolean }[];
  pattern: RegExp;
}

function prepare(schema: GraphQLSchema, route: RestRoute): Prepared {
  const read = route.method === 'GET';
  const root = read ? schema.getQueryType() : schema.getMutationType();
  const field = root?.getFields()[route.field] as GraphQLField<unknown, unknown> | undefined;
  const options = field?.extensions?.pothosOptions as { resolve?: Prepared['resolve']; authScopes?: unknown };
  if (!field || typeof options?.resolve !== 'function')
    throw new Error(`rest: no Rest ${read ? 'query' : 'mutation'} field ${route.field} with a resolver.`);
  const operation = buildOperationNodeForField({
    kind: read ? OperationTypeNode.QUERY : OperationTypeNode.MUTATION,
    schema,
    field: route.field,
    circularReferenceDepth: 3,
  });
  const inPath = [...route.path.matchAll(/:([a-z_]+)/g)].map((m) => m[1]);
  return {
    document: { kind: Kind.DOCUMENT, definitions: [operation] },
    operationName: operation.name?.value,
    resolve: options.resolve,
    authScopes: options.authScopes,
    inPath,
    query: field.args
      .filter((a) => !inPath.includes(a.name))
      .map((a) => ({ name: a.name, list: getNamedType(a.type).name === 'CommaList' })),
    pattern: new RegExp(`^${route.path.replace(/:[a-z_]+/g, '([^/]+)')}/?$`),
  };
}

/** A path segment decoded; one that does not decode stays as it came (an unknown id: a 404). */
function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** A REST request as the operation its route stands for: the runner spends its cost, then runs it. */
export interface RouteOperation {
  schema: GraphQLSchema;
  document: DocumentNode;
  variables: Record<string, unknown>;
  operationName: string | undefined;
  /** The field's scopes checked, then its resolver. */
  run(ctx: RequestContext): unknown;
}

export function createDirectRest(schema: GraphQLSchema) {
  const prepared = new Map<RestRoute, Prepared>();
  return function operationOf(route: RestRoute, path: string, search: URLSearchParams): RouteOperation {
    let p = prepared.get(route);
    if (!p) {
      p = prepare(schema, route);
      prepared.set(route, p);
    }
    const args: Record<string, unknown> = {};
    const values = p.pattern.exec(path)?.slice(1) ?? [];
    p.inPath.forEach((name, i) => {
      args[name] = decoded(values[i] ?? '');
    });
    for (const { name, list } of p.query) {
      // Repeated and empty values were refused already (rest/params.ts); lists join like SOFA's.
      const v = list ? search.getAll(name).join(',') : search.get(name);
      if (v !== null && v !== '') args[name] = v;
    }
    const { resolve, authScopes } = p;
    return {
      schema,
      document: p.document,
      variables: args,
      operationName: p.operationName,
      run(ctx) {
        const refused = fieldRefusal(ctx.principal, authScopes);
        if (refused) throw refused;
        return resolve(null, args, ctx, undefined);
      },
    };
  };
}
