import type { EntityManager } from '@mikro-orm/postgresql';
import { authenticate } from '../auth/keys.ts';
import type { RateLimiter } from '../auth/rate-limit.ts';
import type { Clock } from '../lib/clock.ts';
import { createGraphQLContext, type GraphQLContext } from '../schema/context.ts';
import { scopedEm } from '../services/context.ts';
import { requestScope } from './request-scope.ts';

export interface AppDeps {
  em: EntityManager;
  clock: Clock;
  keyCacheTtlMs: number;
  rateLimiter: RateLimiter;
}

/**
 * The request context: the API key from the Authorization header becomes a principal (clinic +
 * scopes) and counts against its rate limit, and a fresh EntityManager fork is bound to that clinic by the tenant filter.
 */
export async function contextFromRequest(
  deps: AppDeps,
  authorization: string | null,
  rest: boolean,
): Promise<GraphQLContext> {
  const scope = requestScope.getStore();
  const principal = await authenticate(deps.em, authorization, deps.keyCacheTtlMs);
  if (scope) scope.keyId = principal.keyId;
  await deps.rateLimiter.consume(principal.keyId, scope?.setHeader ?? (() => {}));
  const em = scopedEm(deps.em, principal.clinicId);
  return createGraphQLContext(scope?.requestId ?? 'req_unknown', { em, principal, clock: deps.clock }, rest);
}
