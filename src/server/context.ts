import type { EntityManager } from '@mikro-orm/postgresql';
import { authenticate } from '../auth/keys.ts';
import type { RateLimiter } from '../auth/rate-limit.ts';
import type { Clock } from '../lib/clock.ts';
import { authenticated, currentRequest, type RequestContext } from '../lib/request-context.ts';

export interface AppDeps {
  em: EntityManager;
  clock: Clock;
  keyCacheTtlMs: number;
  rateLimiter: RateLimiter;
}

/**
 * Authenticates the current request: the API key of the Authorization header becomes a principal
 * (clinic + scopes) and counts against its rate limit, and the request context (src/lib) gains
 * the principal, an EntityManager bound to its clinic and the request's loaders. Done once per
 * request: a later call returns the same context.
 */
export async function authenticateRequest(
  deps: AppDeps,
  authorization: string | null,
  rest: boolean,
): Promise<RequestContext> {
  const info = currentRequest();
  if (!info) throw new Error('authenticateRequest outside a request');
  if ('principal' in info) return info as RequestContext;
  const principal = await authenticate(deps.em, authorization, deps.keyCacheTtlMs);
  info.keyId = principal.keyId;
  await deps.rateLimiter.consume(principal.keyId, info.setHeader);
  return authenticated(info, principal, deps.em, rest);
}
