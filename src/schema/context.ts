import type { Principal } from '../auth/keys.ts';
import type { ServiceContext } from '../services/context.ts';
import { createLoaders, type Loaders } from './loaders.ts';

/** The GraphQL context of one request, for the Public schema and for SOFA's Rest schema alike. */
export interface GraphQLContext {
  requestId: string;
  principal: Principal;
  svc: ServiceContext;
  loaders: Loaders;
  /** True under SOFA: embedded relations come only from what the REST request asked to include. */
  rest: boolean;
}

export function createGraphQLContext(requestId: string, svc: ServiceContext, rest = false): GraphQLContext {
  return { requestId, principal: svc.principal, svc, loaders: createLoaders(svc), rest };
}
