import type { YogaServerInstance } from 'graphql-yoga';
import type { RequestContext } from '../lib/request-context.ts';

/**
 * What the GraphQL pipeline (graphql-pipeline.ts) and the operation runner that runs it
 * (runner.ts) both speak of, apart from either: the pipeline's plugins reach back to the runner
 * (introspection-cache.ts, introspection.ts), so neither may import the other's types.
 */
export interface OperationParams {
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
}

export type Yoga = YogaServerInstance<Record<string, unknown>, RequestContext>;
