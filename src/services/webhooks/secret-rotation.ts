import { randomBytes } from 'node:crypto';
import { SECRET_PREFIX } from './webhook.resource.ts';

/**
 * Rotating a subscription's signing secret (issue 29, as Stripe does): the new secret signs from
 * the rotation on, and the one it replaced keeps signing beside it for ROTATION_OVERLAP_HOURS, so
 * a receiver can switch its configuration within that time without refusing a delivery. During
 * the overlap every delivery carries both signatures (src/webhooks/signing.ts).
 */
export const ROTATION_OVERLAP_HOURS = 24;

/**
 * A new secret: the prefix and 32 random bytes in standard base64 (44 characters), the form
 * Standard Webhooks' libraries take (src/lib/standard-webhooks.ts). Secrets made before were
 * base64url; they keep signing X-Service-Signature and are replaced at their next rotation.
 */
export const newSecret = () => SECRET_PREFIX + randomBytes(32).toString('base64');

/** What a delivery reads of a subscription's secrets. */
export interface Secrets {
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
}

/** The secrets that sign a delivery attempted at `now`: the current one first, then a replaced one still in its overlap. */
export function signingSecrets(s: Secrets, now: Date): string[] {
  const keep =
    s.previousSecret && s.previousSecretExpiresAt && s.previousSecretExpiresAt.getTime() > now.getTime();
  return keep ? [s.secret, s.previousSecret as string] : [s.secret];
}
