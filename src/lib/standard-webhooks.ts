import { createHmac } from 'node:crypto';

/**
 * Standard Webhooks (standardwebhooks.com, what the `standardwebhooks` and `svix` receiver
 * libraries verify), signed beside the spec's `X-Service-Signature`: `webhook-signature` holds
 * `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` keyed by the secret's bytes, the
 * base64 after `whsec_`. The timestamp is signed, so a receiver can refuse an old delivery.
 *
 * Only a secret in the standard form (`whsec_` + standard base64 of 32 bytes, 44 characters)
 * has bytes a library takes; secrets made before (base64url, 43 characters, still verifying under
 * X-Service-Signature) get no entry here until their next rotation.
 */
const STANDARD_SECRET = /^whsec_([A-Za-z0-9+/]{43}=)$/;

/** The key bytes of a secret in the standard form; null for one made before it. */
export function standardKeyOf(secret: string): Buffer | null {
  const m = STANDARD_SECRET.exec(secret);
  return m ? Buffer.from(m[1] as string, 'base64') : null;
}

/** `v1,<base64>` of one key over a message's id, timestamp (Unix seconds) and exact body. */
export function standardSignatureOf(
  key: Buffer,
  id: string,
  timestamp: number,
  body: string | Buffer,
): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64')}`;
}

/**
 * The `webhook-signature` header: one entry per secret in the standard form, space-separated as
 * the standard says (both secrets of a rotation's overlap, the current first); null when none is.
 */
export function standardSignatureHeader(
  secrets: readonly string[],
  id: string,
  timestamp: number,
  body: string | Buffer,
): string | null {
  const entries = secrets.flatMap((s) => {
    const key = standardKeyOf(s);
    return key ? [standardSignatureOf(key, id, timestamp, body)] : [];
  });
  return entries.length > 0 ? entries.join(' ') : null;
}
