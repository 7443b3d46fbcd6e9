import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Signed media links (spec, Media link: `{url, expires_at}`, valid about 10 hours). The link is
 * `<baseUrl>/media/<token>`, the token `<payload>.<signature>`:
 * - payload: base64url of the JSON `{"c": clinicId, "k": key, "f": filename|null, "m": mime,
 *   "e": expiry in Unix seconds}`;
 * - signature: base64url of HMAC-SHA256(secret, "media-link.v1." + payload).
 * Nothing is stored per link: any instance with the secret verifies it and reads the object from
 * the shared store. The secret never leaves the service; changing it voids every link.
 */
export interface MediaLinkPayload {
  clinicId: number;
  key: string;
  filename: string | null;
  mime: string;
  expiresAt: Date;
}

export const MEDIA_LINK_TTL_MS = 10 * 3600_000;
const CONTEXT = 'media-link.v1.';
const MAX_TOKEN_LENGTH = 4096;
const SEGMENT = /^[A-Za-z0-9_-]+$/;

const mac = (secret: string, payload: string) =>
  createHmac('sha256', secret)
    .update(CONTEXT + payload)
    .digest('base64url');

export function signMediaLink(
  secret: string,
  baseUrl: string,
  p: { clinicId: number; key: string; filename: string | null; mime: string },
  now: Date,
  ttlMs = MEDIA_LINK_TTL_MS,
): { url: string; expires_at: string } {
  if (!secret) throw new Error('signMediaLink needs a secret.');
  const expires = Math.floor((now.getTime() + ttlMs) / 1000);
  const payload = Buffer.from(
    JSON.stringify({ c: p.clinicId, k: p.key, f: p.filename, m: p.mime, e: expires }),
  ).toString('base64url');
  const token = `${payload}.${mac(secret, payload)}`;
  return {
    url: `${baseUrl.replace(/\/+$/, '')}/media/${token}`,
    expires_at: new Date(expires * 1000).toISOString(),
  };
}

/** The payload of a genuine token that has not expired at `now`; null for anything else. */
export function verifyMediaToken(secret: string, token: string, now: Date): MediaLinkPayload | null {
  if (!secret || typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH) return null;
  const parts = token.split('.');
  if (parts.length !== 2) return null;
  const [payload, signature] = parts;
  if (!SEGMENT.test(payload) || !SEGMENT.test(signature)) return null;
  // Compared as text, so only the one canonical encoding of the signature passes.
  const expected = Buffer.from(mac(secret, payload));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  let data: unknown;
  try {
    data = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  const { c, k, f, m, e } = (data ?? {}) as Record<string, unknown>;
  if (
    !Number.isSafeInteger(c) ||
    (c as number) <= 0 ||
    typeof k !== 'string' ||
    !k ||
    (f !== null && typeof f !== 'string') ||
    typeof m !== 'string' ||
    !Number.isSafeInteger(e)
  ) {
    return null;
  }
  const expiresAt = new Date((e as number) * 1000);
  if (now.getTime() >= expiresAt.getTime()) return null;
  return { clinicId: c as number, key: k, filename: f as string | null, mime: m, expiresAt };
}

/**
 * A Content-Disposition value (RFC 6266): `filename="…"` in printable ASCII, every other
 * character, `"`, `\` and `%` replaced by `_`, and, when that lost anything, the exact name as
 * `filename*=UTF-8''…` (RFC 5987 percent-encoding), which user agents prefer.
 */
export function contentDisposition(type: 'inline' | 'attachment', filename: string | null): string {
  if (!filename) return type;
  const fallback = filename.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  if (fallback === filename) return `${type}; filename="${filename}"`;
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `${type}; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
