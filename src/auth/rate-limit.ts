import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { AppError } from '../lib/errors.ts';

/** What a request learns from the limiter, sent back as RateLimit-* headers. */
export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Seconds until the window resets (at least 1). */
  resetSeconds: number;
}

export interface RateLimiter {
  /** Counts one request of this API key; throws `rate_limited` (429) over the limit. */
  consume(keyId: string, setHeader: (name: string, value: string) => void): Promise<void>;
}

const unlimited: RateLimiter = { consume: async () => {} };

function sendHeaders(state: RateLimitState, setHeader: (name: string, value: string) => void) {
  setHeader('RateLimit-Limit', String(state.limit));
  setHeader('RateLimit-Remaining', String(state.remaining));
  setHeader('RateLimit-Reset', String(state.resetSeconds));
}

/**
 * Requests per second per API key, counted in this process (rate-limiter-flexible's memory store;
 * its Redis store would share the count between instances). 0 turns limiting off.
 */
export function createRateLimiter(perSecond: number): RateLimiter {
  if (perSecond <= 0) return unlimited;
  const limiter = new RateLimiterMemory({ points: perSecond, duration: 1 });
  const stateOf = (r: RateLimiterRes): RateLimitState => ({
    limit: perSecond,
    remaining: Math.max(0, r.remainingPoints),
    resetSeconds: Math.max(1, Math.ceil(r.msBeforeNext / 1000)),
  });
  return {
    async consume(keyId, setHeader) {
      try {
        sendHeaders(stateOf(await limiter.consume(keyId)), setHeader);
      } catch (e) {
        if (!(e instanceof RateLimiterRes)) throw e;
        const state = stateOf(e);
        sendHeaders(state, setHeader);
        setHeader('Retry-After', String(state.resetSeconds));
        throw new AppError(
          'rate_limited',
          `Too many requests for this API key: at most ${perSecond} per second. Retry after ${state.resetSeconds} s.`,
        );
      }
    },
  };
}
