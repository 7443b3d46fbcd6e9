import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../lib/errors.ts';
import { currentRequest } from '../lib/request-context.ts';

/**
 * `Idempotency-Key` on POST routes (beyond the spec: a retried request must never text a patient
 * twice or write twice; docs/chat.md). Shared by every write; the chat send is its first user.
 * Per API key, for 24 hours: the same key with the same body answers the first response again
 * without running it; with another body it is a 409; a request
 * arriving while the first is still running waits for its answer. A request refused with an
 * error before it wrote anything frees its key, so a corrected retry may reuse it.
 * A key is stored and looked up as its SHA-256 (`key_hash`), never as sent: the client chose it,
 * and one that sent a card number as a key must not have it kept in the clear (docs/decisions.md,
 * "Card numbers"). No answer repeats a key.
 */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3600_000;
const WAIT_STEP_MS = 50;
const WAIT_MAX_MS = 5_000;

export interface Stored<T> {
  status: number;
  body: T;
  replayed: boolean;
}

/** JSON with object keys sorted, so key order does not make two bodies differ. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

export const requestHash = (body: unknown): string =>
  createHash('sha256').update(canonical(body)).digest('hex');

/** What the table keeps of a key (hex SHA-256; the migration hashed older rows the same way). */
export const keyHashOf = (key: string): string => createHash('sha256').update(key).digest('hex');

export function checkIdempotencyKey(key: unknown): string | undefined {
  if (key === undefined || key === null) return undefined;
  if (typeof key !== 'string' || !/^[\x21-\x7e]{1,255}$/.test(key))
    throw new AppError(
      'validation_failed',
      'Idempotency-Key must be 1 to 255 printable ASCII characters without spaces (a UUID is a good choice).',
      { param: 'Idempotency-Key' },
    );
  return key;
}

export async function idempotent<T>(
  em: EntityManager,
  scope: {
    keyId: string;
    clinicId: number;
    key: string | undefined;
    hash: string;
    now: Date;
    /**
     * How long a claim may stay unanswered before no request can still be working on it (past
     * the request deadline): its process stopped mid-request.
     */
    leaseMs: number;
  },
  run: () => Promise<{ status: number; body: T }>,
): Promise<Stored<T>> {
  if (scope.key === undefined) return { ...(await run()), replayed: false };
  const conn = em.getConnection();
  const keyHash = keyHashOf(scope.key);
  const expired = new Date(scope.now.getTime() - IDEMPOTENCY_WINDOW_MS);
  // This key if it expired, and a few other expired ones: the table holds about a day of keys.
  await conn.execute(
    `delete from "idempotency_key" where ("clinic_id" = ? and "api_key_id" = ? and "key_hash" = ? and "created_at" < ?)
       or "id" in (select "id" from "idempotency_key" where "created_at" < ? limit 20)`,
    [scope.clinicId, scope.keyId, keyHash, expired, expired],
  );
  const claimed = await conn.execute<{ id: number }[]>(
    `insert into "idempotency_key" ("clinic_id", "api_key_id", "key_hash", "request_hash", "created_at")
     values (?, ?, ?, ?, ?) on conflict ("clinic_id", "api_key_id", "key_hash") do nothing returning "id"`,
    [scope.clinicId, scope.keyId, keyHash, scope.hash, scope.now],
  );
  if (claimed.length) {
    const id = claimed[0].id;
    const request = currentRequest();
    const committedBefore = request?.committedWrites ?? 0;
    let result: { status: number; body: T };
    try {
      result = await run();
    } catch (e) {
      // Freed only when nothing was written: a request that failed after one of its writes
      // committed (a media send whose caption then failed) keeps its key unanswered, so a retry
      // is refused (a 409 naming it) rather than run again: never a second message or row.
      if ((request?.committedWrites ?? 0) === committedBefore)
        await conn.execute('delete from "idempotency_key" where "id" = ?', [id]);
      throw e;
    }
    // Outside the try: the write committed, so a failure to store its answer leaves the key
    // claimed and unanswered, as above, rather than freed for a second write.
    await conn.execute('update "idempotency_key" set "status" = ?, "response" = ? where "id" = ?', [
      result.status,
      JSON.stringify(result.body),
      id,
    ]);
    return { ...result, replayed: false };
  }
  for (let waited = 0; ; waited += WAIT_STEP_MS) {
    const [row] = await conn.execute<
      { request_hash: string; status: number | null; response: T | null; abandoned: boolean }[]
    >(
      `select "request_hash", "status", "response", "created_at" < ? as "abandoned"
         from "idempotency_key" where "clinic_id" = ? and "api_key_id" = ? and "key_hash" = ?`,
      [new Date(scope.now.getTime() - scope.leaseMs), scope.clinicId, scope.keyId, keyHash],
    );
    // The first request failed and freed the key meanwhile: this one runs afresh.
    if (!row) return idempotent(em, scope, run);
    if (row.request_hash !== scope.hash)
      throw new AppError(
        'conflict',
        'This Idempotency-Key was used with another request body; use a new key for a new request.',
        { param: 'Idempotency-Key' },
      );
    if (row.status !== null) return { status: row.status, body: row.response as T, replayed: true };
    // Not run again: the first request may have recorded, even sent, its message before it
    // stopped, and a retry must never text the patient twice (docs/chat.md).
    if (row.abandoned)
      throw new AppError(
        'conflict',
        `The first request with this Idempotency-Key did not finish within ${Math.round(scope.leaseMs / 1000)} seconds (the service may have stopped while handling it), so it is not run again. Look for its message in GET /v1/chat/messages?phone=… before sending; then send with a new key.`,
        { param: 'Idempotency-Key' },
      );
    if (waited >= WAIT_MAX_MS)
      throw new AppError(
        'conflict',
        'A request with this Idempotency-Key is still being processed; retry in a moment.',
        { param: 'Idempotency-Key' },
      );
    await new Promise((r) => setTimeout(r, WAIT_STEP_MS));
  }
}
