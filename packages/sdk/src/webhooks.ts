import { createHmac, timingSafeEqual } from 'node:crypto';
import type { webhooks } from './generated/openapi.js';

/** A delivery's body: one envelope per event type, `type` telling which (openapi.json's webhooks). */
export type WebhookEvent = {
  [T in keyof webhooks]: webhooks[T]['post']['requestBody']['content']['application/json'];
}[keyof webhooks];

/** The request's headers as fetch (`Headers`) or node:http (`req.headers`) give them. */
export type WebhookHeaders =
  | { get(name: string): string | null }
  | Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * Which signature to check. `standard`: Standard Webhooks' `webhook-signature`, which covers the
 * id and the timestamp, so an old delivery replayed is refused. `service`: the spec's
 * `X-Service-Signature`, over the body alone. `auto` (the default), per secret: `standard` for a
 * secret in the standard form (`whsec_` and 44 characters of standard base64: every secret made
 * or rotated since Standard Webhooks), `service` for one made before; a standard secret is never
 * checked the weaker way, or a replay would pass without its timestamp.
 */
export type WebhookScheme = 'auto' | 'standard' | 'service';

export interface VerifyWebhookOptions {
  /** The raw body, exactly the bytes received (not re-serialized JSON). */
  body: string | Uint8Array;
  headers: WebhookHeaders;
  /** The subscription's secret; several while you switch to a rotated one (any may match). */
  secret: string | readonly string[];
  scheme?: WebhookScheme;
  /** How far `webhook-timestamp` may be from now (the standard's 5 minutes by default). */
  toleranceSeconds?: number;
  /** The receiver's clock (default: now). */
  now?: Date | number;
}

/** The delivery did not verify; `message` says why (never which secret). */
export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

const STANDARD_SECRET = /^whsec_([A-Za-z0-9+/]{43}=)$/;
const DEFAULT_TOLERANCE_SECONDS = 5 * 60;

/**
 * Verifies a webhook delivery and answers its parsed envelope; throws WebhookVerificationError
 * when no secret's signature matches (or the standard timestamp is out of tolerance). Give it the
 * raw body: a body parsed and serialized again is other bytes, and fails.
 *
 *   const event = verifyWebhook({ body: rawBody, headers: req.headers, secret: process.env.WEBHOOK_SECRET! });
 *   if (event.type === 'appointment.created') console.log(event.data.start);
 */
export function verifyWebhook(options: VerifyWebhookOptions): WebhookEvent {
  const { body, headers, scheme = 'auto' } = options;
  const secrets = typeof options.secret === 'string' ? [options.secret] : options.secret;
  if (typeof body !== 'string' && !(body instanceof Uint8Array))
    throw new TypeError('verifyWebhook needs the raw body (a string or bytes), not parsed JSON.');
  if (secrets.length === 0) throw new TypeError('verifyWebhook needs a secret.');
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body);
  const header = headerReader(headers);
  const failures = new Set<string>();
  for (const secret of secrets) {
    const key = STANDARD_SECRET.exec(secret)?.[1];
    const use = scheme === 'auto' ? (key ? 'standard' : 'service') : scheme;
    const failure =
      use === 'standard'
        ? key
          ? standardFailure(Buffer.from(key, 'base64'), bytes, header, options)
          : 'the secret is not in the standard form (whsec_ and standard base64): verify it with scheme "service", or rotate it'
        : serviceFailure(secret, bytes, header);
    if (failure === null) return parse(bytes);
    failures.add(failure);
  }
  throw new WebhookVerificationError(`The webhook did not verify: ${[...failures].join('; ')}.`);
}

type HeaderReader = (name: string) => string | null;

function headerReader(headers: WebhookHeaders): HeaderReader {
  if (typeof headers.get === 'function') {
    const get = headers.get as (name: string) => string | null;
    return (name) => get.call(headers, name);
  }
  const lower = new Map(
    Object.entries(headers as Record<string, string | readonly string[] | undefined>).map(([k, v]) => [
      k.toLowerCase(),
      v,
    ]),
  );
  return (name) => {
    const value = lower.get(name);
    return value === undefined ? null : typeof value === 'string' ? value : value.join(', ');
  };
}

/**
 * Standard Webhooks: `webhook-signature` holds space-separated `v1,<base64>` entries (one per
 * secret during a rotation), each an HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`
 * keyed by the secret's bytes. Answers why it failed, or null.
 */
function standardFailure(
  key: Buffer,
  body: Buffer,
  header: HeaderReader,
  options: VerifyWebhookOptions,
): string | null {
  const id = header('webhook-id');
  const timestamp = header('webhook-timestamp');
  const signature = header('webhook-signature');
  if (id === null || timestamp === null || signature === null)
    return 'webhook-id, webhook-timestamp or webhook-signature is missing';
  if (!/^\d+$/.test(timestamp)) return 'webhook-timestamp is not Unix seconds';
  const now = options.now === undefined ? Date.now() : Number(options.now);
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const age = Math.floor(now / 1000) - Number(timestamp);
  if (age > tolerance) return 'webhook-timestamp is too old';
  if (age < -tolerance) return 'webhook-timestamp is too far in the future';
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest();
  const matches = signature
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .some((entry) => sameBytes(expected, Buffer.from(entry.slice(3), 'base64')));
  return matches ? null : 'no webhook-signature entry matches';
}

/**
 * The spec's scheme: `X-Service-Signature` holds comma-separated `sha256=<hex>` entries, each an
 * HMAC-SHA256 of the raw body keyed by the whole secret string. Its timestamp is not signed, so
 * nothing here can tell a replay.
 */
function serviceFailure(secret: string, body: Buffer, header: HeaderReader): string | null {
  const signature = header('x-service-signature');
  if (signature === null) return 'X-Service-Signature is missing';
  const expected = createHmac('sha256', secret).update(body).digest();
  const matches = signature
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => /^sha256=[0-9a-fA-F]{64}$/.test(entry))
    .some((entry) => sameBytes(expected, Buffer.from(entry.slice('sha256='.length), 'hex')));
  return matches ? null : 'no X-Service-Signature entry matches';
}

/** Constant time for equal lengths; a length is no secret (every HMAC-SHA256 is 32 bytes). */
function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

function parse(body: Buffer): WebhookEvent {
  try {
    return JSON.parse(body.toString('utf8')) as WebhookEvent;
  } catch {
    throw new WebhookVerificationError('The webhook verified, but its body is not JSON.');
  }
}
