import { GraphQLError, type GraphQLSchema } from 'graphql';
import { createYoga, type YogaInitialContext } from 'graphql-yoga';
import { compiledExecute } from '../lib/compiled-execute.ts';
import { AppError, findAppError, isErrorCode } from '../lib/errors.ts';
import { logger } from '../lib/logger.ts';
import type { GraphQLContext } from '../schema/context.ts';
import { type AppDeps, contextFromRequest } from './context.ts';
import { currentRequestId } from './request-scope.ts';

/** AppErrors keep code (and param); unknown errors are logged and masked as internal_error. */
export function maskGraphQLError(error: unknown): Error {
  const app = findAppError(error);
  const gql = error instanceof GraphQLError ? error : undefined;
  if (app) {
    return new GraphQLError(app.message, {
      nodes: gql?.nodes,
      path: gql?.path,
      extensions: {
        code: app.code,
        ...(app.param ? { param: app.param } : {}),
        ...(app.details?.required_scopes ? { required_scopes: app.details.required_scopes } : {}),
        request_id: currentRequestId(),
        // Only authentication and the rate limit change the HTTP status of a GraphQL response.
        ...(app.code === 'unauthenticated' || app.code === 'rate_limited'
          ? { http: { status: app.status } }
          : {}),
      },
    });
  }
  if (gql && !gql.originalError) {
    // Parse and validation errors describe the client's document: pass them through.
    return new GraphQLError(gql.message, {
      nodes: gql.nodes,
      path: gql.path,
      extensions: {
        ...gql.extensions,
        code: isErrorCode(gql.extensions?.code) ? gql.extensions.code : 'invalid_request',
        request_id: currentRequestId(),
      },
    });
  }
  logger.error(
    { err: gql?.originalError ?? error, request_id: currentRequestId() },
    'unhandled GraphQL error',
  );
  return new GraphQLError('Something went wrong on our side. Quote the request_id when reporting it.', {
    nodes: gql?.nodes,
    path: gql?.path,
    extensions: { code: 'internal_error', request_id: currentRequestId() },
  });
}

export function createGraphQLHandler(schema: GraphQLSchema, deps: AppDeps) {
  return createYoga<Record<string, unknown>, GraphQLContext>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    graphiql: {
      title: 'clinic-gateway GraphQL',
      defaultQuery: '{ patients(first: 5) { edges { node { id first_name last_name phone } } } }',
    },
    logging: false,
    plugins: [
      { onExecute: ({ setExecuteFn }: any) => setExecuteFn(compiledExecute) },
      {
        // Parse and validation errors skip masking; give them our code too.
        onResultProcess({ result, setResult }: { result: any; setResult: (r: any) => void }) {
          if (!result || Array.isArray(result) || !Array.isArray(result.errors)) return;
          if (result.errors.every((e: any) => isErrorCode(e?.extensions?.code))) return;
          setResult({ ...result, errors: result.errors.map((e: unknown) => maskGraphQLError(e)) });
        },
      } as any,
    ],
    maskedErrors: { maskError: (error) => maskGraphQLError(error) },
    context: async ({ request }: YogaInitialContext) => {
      try {
        return await contextFromRequest(deps, request.headers.get('authorization'), false);
      } catch (e) {
        if (e instanceof AppError) throw maskGraphQLError(e);
        throw e;
      }
    },
  });
}
