import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../src/lib/errors.ts';
import { closeReason, MAX_CLOSE_REASON_BYTES } from '../src/server/close-reason.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { connect, type TestSocket } from './ws-client.ts';

/**
 * A refused websocket closes with 4403 and REST's code and message for the same refusal as its
 * reason (`unauthenticated: …`, `rate_limited: …`), within the 123 bytes a close reason may take.
 * Revocation and scope loss of an open socket: test/subscriptions.test.ts.
 */
let app: TestApp;
const sockets: TestSocket[] = [];
/** Failed authentications an address may make in a minute before it is throttled. */
const FAILURES = 4;

beforeAll(async () => {
  app = await startTestApp({ limits: { authFailuresPerMinute: FAILURES } });
});

afterAll(async () => {
  await Promise.all(sockets.map((s) => s.dispose()));
});

/** The close a socket with this connection_init payload gets, once it tries to subscribe. */
async function closeOf(params: Record<string, unknown> | null) {
  const s = connect(app.url, params);
  sockets.push(s);
  s.subscribe('subscription { events { id } }');
  return s.closed;
}

/** REST's error for the same credential. */
async function restRefusal(key: string | null) {
  const r = await app.get('/v1/patients', key);
  return { status: r.status, ...r.body.error };
}

// In order: each refusal counts against the address, the last one finds it throttled.
describe('a refused websocket', () => {
  it('without a key: unauthenticated, in the words of REST’s 401', async () => {
    const closed = await closeOf(null);
    const rest = await restRefusal(null);
    expect(rest.status).toBe(401);
    expect(closed).toEqual({ code: 4403, reason: `unauthenticated: ${rest.message}` });
  });

  it('with an unknown key: the same', async () => {
    const closed = await closeOf({ apiKey: 'cg_live_nope' });
    const rest = await restRefusal('cg_live_nope');
    expect(closed).toEqual({ code: 4403, reason: `unauthenticated: ${rest.message}` });
    expect(closed.reason).toBe('unauthenticated: Invalid or revoked API key.');
  });

  it('from an address that failed too often: rate_limited, as REST’s 429 says it', async () => {
    const closed = await closeOf({ apiKey: 'cg_live_nope' });
    const rest = await restRefusal('cg_live_nope');
    expect(rest.status).toBe(429);
    expect(rest.code).toBe('rate_limited');
    // The seconds left may differ by one between the two answers.
    const words = (s: string) => s.replace(/\d+ s\b/, 'N s');
    expect(closed.code).toBe(4403);
    expect(words(closed.reason)).toBe(words(`rate_limited: ${rest.message}`));
  });
});

describe('closeReason', () => {
  it('keeps a long message within the 123 bytes of a close frame, cut at a character, the code first', () => {
    const long = new AppError(
      'forbidden',
      `This API key lacks the scope required here: ${'ä€😀'.repeat(40)}.`,
    );
    const reason = closeReason(long);
    expect(Buffer.byteLength(reason)).toBeLessThanOrEqual(MAX_CLOSE_REASON_BYTES);
    expect(Buffer.byteLength(reason)).toBeGreaterThan(MAX_CLOSE_REASON_BYTES - 4);
    expect(reason).toMatch(/^forbidden: This API key lacks the scope required here: /);
    expect(reason.endsWith('…')).toBe(true);
    expect(reason).not.toContain('\uFFFD');
    expect(Buffer.from(reason).toString()).toBe(reason);
    // A short one is whole.
    expect(closeReason(new AppError('unauthenticated', 'Invalid or revoked API key.'))).toBe(
      'unauthenticated: Invalid or revoked API key.',
    );
  });
});
