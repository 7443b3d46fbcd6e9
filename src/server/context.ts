import type { EntityManager } from '@mikro-orm/postgresql';
import { authenticate } from '../auth/keys.ts';
import type { RateLimiter } from '../auth/rate-limit.ts';
import { budgetAddress } from '../lib/client-address.ts';
import type { Clock } from '../lib/clock.ts';
import { AppError } from '../lib/errors.ts';
import type { Limits } from '../lib/limits.ts';
import {
  type AppServices,
  authenticated,
  currentRequest,
  type Principal,
  type RequestContext,
  type RequestInfo,
} from '../lib/request-context.ts';

export interface AppDeps {
  em: EntityManager;
  clock: Clock;
  keyCacheTtlMs: number;
  rateLimiter: RateLimiter;
  limits: Limits;
  services: AppServices;
  /** PUBLIC_URL without its trailing slash: error bodies' doc_url is absolute against it. */
  publicUrl?: string;
}

/**
 * Step 1 of the operation runner (src/server/runner.ts): a credential (an Authorization value, `Bearer <key>`) becomes a
 * principal (clinic + scopes) and counts against its rate limit, and `info` gains the principal,
 * an EntityManager bound to its clinic and the request's loaders. Reads no HTTP request: HTTP,
 * REST and graphql-ws pass what they were given.
 */
export async function authenticateCredential(
  deps: AppDeps,
  info: RequestInfo,
  authorization: string | null,
  rest: boolean,
): Promise<RequestContext> {
  const limiter = deps.rateLimiter;
  let principal: Principal;
  try {
    principal = await authenticate(deps.em, authorization, deps.keyCacheTtlMs);
  } catch (e) {
    if (e instanceof AppError && e.code === 'unauthenticated') {
      // Only what fails to authenticate is throttled: a valid key is served from any address
      // (it spends its own budget), so clients behind one proxy or NAT never lock each other
      // out. A throttled address gets its 429 instead of the 401, and is not counted further.
      await limiter.checkAddress(info.clientAddress, info.setHeader);
      await limiter.authFailed(info.clientAddress);
    }
    throw e;
  }
  info.keyId = principal.keyId;
  // A request spends once (one database round trip): its cost once known, before it runs
  // (src/schema/cost.ts), or one point if it is refused before that (see settleRateLimit).
  let spent = false;
  return authenticated(
    info,
    principal,
    deps.em,
    rest,
    (points) => {
      spent = true;
      return limiter.spend(principal.keyId, points, info.setHeader);
    },
    () => spent,
    deps.services,
  );
}

/** Who asks without a key: no clinic (no clinic has id 0) and no scope. */
const ANONYMOUS: Principal = {
  keyId: 'anonymous',
  clinicId: 0,
  clinicKind: 'dental',
  // No clinic: nothing outside the service is reachable in its name, so the stricter mode.
  clinicMode: 'live',
  country: 'US',
  scopes: new Set(),
};

/** What an anonymous request spends at least (a refusal, `{ __typename }`). */
export const ANONYMOUS_MIN_BYTES = 1024;

/** The budget of bytes of each anonymous request (`anonymousBudget`). */
const anonymousBudgets = new WeakMap<object, AnonymousBudget>();

export interface AnonymousBudget {
  /** Spends `bytes` more before the answer is made: `rate_limited` once the budget is spent. */
  spend(bytes: number): Promise<void>;
  /** Spends (or gives back) `bytes` once the answer is made: the answer is sent either way. */
  settle(bytes: number): Promise<void>;
}

/**
 * The context of a request without a key that may run anyway: an operation made only of
 * introspection fields (src/server/introspection.ts decides; nothing else gets here). It spends
 * from its client address's budget of bytes (`anonymousBytesPerWindow`), not from points: its
 * cost in points says nothing of its work, the size of its answer does. When its cost would be
 * spent it spends ANONYMOUS_MIN_BYTES; src/server/introspection-cache.ts spends the rest of its
 * answer's size (`anonymousBudget`).
 */
export function anonymousContext(deps: AppDeps, info: RequestInfo): RequestContext {
  let spent = false;
  // An IPv6 client's budget is its /64's (src/lib/client-address.ts).
  const address = budgetAddress(info.clientAddress);
  const limiter = deps.rateLimiter;
  const ctx = authenticated(
    info,
    ANONYMOUS,
    deps.em,
    false,
    async () => {
      spent = true;
      await limiter.spendAnonymous(address, ANONYMOUS_MIN_BYTES, info.setHeader);
    },
    () => spent,
    deps.services,
  );
  // When the window the answer was charged in ends: what it did not use is given back to that
  // window only (src/auth/rate-limit.ts).
  let chargedUntil = 0;
  anonymousBudgets.set(ctx, {
    async spend(bytes) {
      if (bytes > 0) chargedUntil = await limiter.spendAnonymous(address, bytes, info.setHeader);
    },
    async settle(bytes) {
      if (bytes !== 0) await limiter.spendAnonymous(address, bytes, info.setHeader, true, chargedUntil);
    },
  });
  return ctx;
}

/** The current request's budget of bytes if it runs without a key. */
export const anonymousBudget = (): AnonymousBudget | undefined => {
  const ctx = currentRequest();
  return ctx && anonymousBudgets.get(ctx);
};

/**
 * Spends one point for an authenticated request refused before its cost was known (an unknown
 * query parameter, a GraphQL document that does not validate), so it too counts and carries the
 * RateLimit headers. Nothing for a request that spent already or is not authenticated.
 */
export async function settleRateLimit(): Promise<void> {
  const ctx = currentRequest();
  if (ctx && 'principal' in ctx && !(ctx as RequestContext).hasSpent())
    await (ctx as RequestContext).spend(1);
}
