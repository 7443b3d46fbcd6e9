import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The spec's HMAC scheme (Events: `X-Service-Signature: sha256=<hex>`, the HMAC-SHA256 of the
 * exact raw body keyed by a secret). Webhook deliveries sign with it and the messaging network's
 * callback is verified with it (src/network). Deliveries also carry Standard Webhooks'
 * signature beside it (./standard-webhooks.ts).
 */
export const SIGNATURE_PREFIX = 'sha256=';

export function signBody(secret: string, body: string | Buffer): string {
  return SIGNATURE_PREFIX + createHmac('sha256', secret).update(body).digest('hex');
}

/**
 * Whether `header` is the signature of `body` under `secret`, compared in constant time. A
 * missing, malformed or wrong header is simply false.
 */
export function verifyBody(
  secret: string,
  body: string | Buffer,
  header: string | null | undefined,
): boolean {
  if (typeof header !== 'string' || !header.startsWith(SIGNATURE_PREFIX)) return false;
  const given = header.slice(SIGNATURE_PREFIX.length);
  if (!/^[0-9a-f]{64}$/i.test(given)) return false;
  const expected = createHmac('sha256', secret).update(body).digest();
  return timingSafeEqual(expected, Buffer.from(given, 'hex'));
}

/**
 * Whether a signing time (`X-Service-Timestamp`, Unix seconds) is within `toleranceSeconds` of
 * now: a receiver refuses an old delivery replayed with its valid signature.
 */
export function freshTimestamp(
  header: string | null | undefined,
  nowMs: number,
  toleranceSeconds = 300,
): boolean {
  if (typeof header !== 'string' || !/^\d{1,12}$/.test(header)) return false;
  return Math.abs(nowMs / 1000 - Number(header)) <= toleranceSeconds;
}
