import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRes,
} from 'rate-limiter-flexible';
import { AppError } from '../lib/errors.ts';
import type { Limits } from '../lib/limits.ts';
import { rateLimitRefusals } from '../lib/metrics.ts';

type SetHeader = (name: string, value: string) => void;

/**
 * The rate limits, in PostgreSQL (rate-limiter-flexible's Postgres store, table `rate_limit`) so
 * every instance of the service on one database shares them; Redis is not needed.
 * - Each API key has a budget of points per window; a request spends its cost (src/schema/cost.ts:
 *   about one point per record it reads, at least 1), announced in the RateLimit headers.
 * - Each client address (src/lib/client-address.ts) may fail authentication a few times a minute;
 *   past that its failing requests get 429 instead of 401. A valid key is always served.
 * - Each client address has a budget of bytes per window for introspection without a key
 *   (src/server/introspection.ts): an answer spends its size, so the work of strangers is bounded
 *   by what they are sent, whatever their documents ask.
 * Should the database not answer, an in-process limiter with the same budget stands in
 * (rate-limiter-flexible's insurance limiter), so a database fault never lifts the limits.
 */
export interface RateLimiter {
  /** Spends `points` of the key's budget; throws `rate_limited` (429) when it is spent. */
  spend(keyId: string, points: number, setHeader: SetHeader): Promise<void>;
  /** Throws `rate_limited` when the address has failed authentication too often (no I/O). */
  checkAddress(address: string, setHeader: SetHeader): Promise<void>;
  /** Counts a failed authentication against the address. */
  authFailed(address: string): Promise<void>;
  /**
   * Spends `bytes` of the address's budget for introspection without a key (negative: gives
   * them back). Before the answer (`after` false) a spent budget throws `rate_limited`; after it
   * (`after` true) the answer is counted and sent, and the next request is the one refused.
   * Returns when the window the bytes were spent in ends (ms since the epoch; 0 when off).
   * Bytes are given back only to the window they were spent in (`chargedUntil`, what the charge
   * returned): once it has ended nothing is given back, so the next window never starts above
   * its budget.
   */
  spendAnonymous(
    address: string,
    bytes: number,
    setHeader: SetHeader,
    after?: boolean,
    chargedUntil?: number,
  ): Promise<number>;
}

/** The pool of the service's database, or null for a limiter held in this process only (tests). */
export function createRateLimiter(pool: pg.Pool | null, limits: Limits): RateLimiter {
  const budget = limits.rateLimitPoints;
  const window = limits.rateLimitWindowSeconds;
  const keys = budget > 0 ? store(pool, 'key', budget, window) : null;
  const failures =
    limits.authFailuresPerMinute > 0 ? store(pool, 'auth', limits.authFailuresPerMinute, 60) : null;
  const anonymousBytes = limits.anonymousBytesPerWindow;
  const anonymous = anonymousBytes > 0 ? store(pool, 'anon', anonymousBytes, window) : null;
  // Addresses over their failure budget, until when: checked without a database round trip once a
  // key failed to verify. The count itself is shared in PostgreSQL: another instance learns of a
  // blocked address at its next failure.
  const blocked = new Map<string, number>();
  const held = () => (limits.rateLimitedDelayMs > 0 ? sleep(limits.rateLimitedDelayMs) : Promise.resolve());

  const headers = (r: RateLimiterRes, setHeader: SetHeader, limit = budget, seconds = window) => {
    setHeader('RateLimit-Policy', `${limit};w=${seconds}`);
    setHeader('RateLimit-Limit', String(limit));
    setHeader('RateLimit-Remaining', String(Math.max(0, r.remainingPoints)));
    setHeader('RateLimit-Reset', String(resetSeconds(r)));
  };

  return {
    async spend(keyId, points, setHeader) {
      if (!keys) return;
      const cost = Math.max(1, Math.ceil(points));
      if (cost > budget) {
        rateLimitRefusals.inc({ limit: 'key' });
        throw new AppError(
          'rate_limited',
          `This request costs ${cost} points, more than this API key's budget of ${budget} per ${window} s.`,
        );
      }
      try {
        headers(await keys.consume(keyId, cost), setHeader);
      } catch (e) {
        if (!(e instanceof RateLimiterRes)) throw e;
        rateLimitRefusals.inc({ limit: 'key' });
        headers(e, setHeader);
        setHeader('Retry-After', String(resetSeconds(e)));
        await held();
        throw new AppError(
          'rate_limited',
          `This API key has spent its budget of ${budget} points per ${window} s (this request costs ${cost}). Retry after ${resetSeconds(e)} s.`,
        );
      }
    },
    async checkAddress(address, setHeader) {
      const until = blocked.get(address);
      if (until === undefined) return;
      const wait = until - Date.now();
      if (wait <= 0) {
        blocked.delete(address);
        return;
      }
      const seconds = String(Math.max(1, Math.ceil(wait / 1000)));
      rateLimitRefusals.inc({ limit: 'address' });
      setHeader('Retry-After', seconds);
      await held();
      throw new AppError(
        'rate_limited',
        `Too many failed authentications from this address. Retry after ${seconds} s.`,
      );
    },
    async authFailed(address) {
      if (!failures) return;
      const r = await failures.penalty(address, 1).catch(() => null);
      if (r && r.consumedPoints >= limits.authFailuresPerMinute) {
        if (blocked.size > 100_000) blocked.clear();
        blocked.set(address, Date.now() + r.msBeforeNext);
      }
    },
    async spendAnonymous(address, bytes, setHeader, after = false, chargedUntil = 0) {
      if (!anonymous) return 0;
      // Announced in bytes: the quota unit of this budget.
      const announce = (r: RateLimiterRes) => headers(r, setHeader, anonymousBytes);
      if (bytes < 0) {
        // The window of the charge has ended: the next one owes nothing back.
        if (Date.now() >= chargedUntil) return 0;
        const r = await anonymous.reward(address, Math.floor(-bytes));
        // It ended meanwhile, and the reward opened a window below zero: brought back to zero.
        announce(r.consumedPoints < 0 ? await anonymous.penalty(address, -r.consumedPoints) : r);
        return chargedUntil;
      }
      try {
        const r = await anonymous.consume(address, Math.max(1, Math.ceil(bytes)));
        announce(r);
        return Date.now() + r.msBeforeNext;
      } catch (e) {
        if (!(e instanceof RateLimiterRes)) throw e;
        announce(e);
        // The answer is made: it is sent, and the bytes it cost are counted all the same.
        if (after) return Date.now() + e.msBeforeNext;
        rateLimitRefusals.inc({ limit: 'anonymous' });
        setHeader('Retry-After', String(resetSeconds(e)));
        await held();
        throw new AppError(
          'rate_limited',
          `This address has been sent its ${anonymousBytes} bytes of introspection without a key per ${window} s. Retry after ${resetSeconds(e)} s, or send an API key.`,
        );
      }
    },
  };
}

const resetSeconds = (r: RateLimiterRes) => Math.max(1, Math.ceil(r.msBeforeNext / 1000));

function store(pool: pg.Pool | null, prefix: string, points: number, duration: number): RateLimiterAbstract {
  const memory = new RateLimiterMemory({ keyPrefix: prefix, points, duration });
  if (!pool) return memory;
  return new RateLimiterPostgres({
    storeClient: pool,
    tableName: 'rate_limit',
    tableCreated: true, // by a migration
    keyPrefix: prefix,
    points,
    duration,
    // A key over its budget is refused from memory until its window ends: no database round trip.
    inMemoryBlockOnConsumed: points,
    insuranceLimiter: memory,
  });
}
