import { createHash, randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { systemWrite } from '../db/system-write.ts';
import { ApiKey } from '../entities/api-key.ts';
import { Clinic } from '../entities/clinic.ts';
import { keyPrefixOf } from '../lib/clinic-mode.ts';
import { AppError } from '../lib/errors.ts';
import { parseIdOr404, toId } from '../lib/ids.ts';
import type { Principal } from '../lib/request-context.ts';
import { type Scope, validateScopes } from './scopes.ts';

/** What a verified key grants a request (src/lib/request-context.ts). */
export type { Principal };

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/**
 * 32 random bytes (256 bits) as base64url; only the SHA-256 is stored. Creating and revoking keys
 * are system writes (src/db/system-write.ts), not a clinic's: a key is the operator's credential
 * for a clinic, kept in a table of all clinics (looked up by hash before any clinic is known), and
 * no clinic record or event follows from it.
 */
export async function createApiKey(
  em: EntityManager,
  input: { clinicId: number; name: string; scopes: string[] },
): Promise<{ id: string; key: string; scopes: Scope[]; clinic_id: string; name: string }> {
  const scopes = validateScopes(input.scopes);
  const { row, key } = await systemWrite(em, async (tx) => {
    const clinic = await tx.findOne(Clinic, input.clinicId);
    if (!clinic) throw new AppError('not_found', `No clinic with id '${toId('Clinic', input.clinicId)}'.`);
    // The prefix says the clinic's mode (src/lib/clinic-mode.ts); a clinic's mode never changes.
    const prefix = keyPrefixOf(clinic.mode);
    const key = `${prefix}${randomBytes(32).toString('base64url')}`;
    const row = tx.create(ApiKey, {
      clinic,
      name: input.name,
      prefix: key.slice(0, prefix.length + 6),
      hash: sha256(key),
      scopes,
      createdAt: new Date(),
    });
    return { row, key };
  });
  await announceKeyChange(em, row.hash);
  return {
    id: toId('ApiKey', row.id),
    key,
    scopes,
    clinic_id: toId('Clinic', input.clinicId),
    name: row.name,
  };
}

export async function revokeApiKey(em: EntityManager, id: string): Promise<void> {
  const n = parseIdOr404('ApiKey', id, 'API key');
  const hash = await systemWrite(em, async (tx) => {
    const row = await tx.findOne(ApiKey, n);
    if (!row) throw new AppError('not_found', `No API key with id '${id}'.`);
    row.revokedAt ??= new Date();
    return row.hash;
  });
  keyCache.delete(hash);
  await announceKeyChange(em, hash);
}

/**
 * Tells every server process (src/auth/key-changes.ts listens) to forget what it cached about a
 * key: a revocation takes effect at once everywhere, and a new key is never refused because an
 * earlier attempt with it was cached as unknown.
 */
export async function announceKeyChange(em: EntityManager, hash: string): Promise<void> {
  await em.getConnection().execute('select pg_notify(?, ?)', [KEY_CHANGES_CHANNEL, hash]);
}

export const KEY_CHANGES_CHANNEL = 'api_key_changed';

/**
 * Counts the key changes heard: a verdict read while one was heard may predate it (its read began
 * before the change committed), so it is not cached, and a websocket opened meanwhile checks its
 * key again (src/server/websocket.ts).
 */
let keyChangesHeard = 0;
export const keyChangeCount = (): number => keyChangesHeard;

/** Drops a key's cached verdict (see announceKeyChange); everything when the hash is unknown. */
export function forgetKey(hash?: string): void {
  keyChangesHeard++;
  if (hash) keyCache.delete(hash);
  else keyCache.clear();
  for (const listener of keyChangeListeners) listener(hash);
}

const keyChangeListeners = new Set<(hash?: string) => void>();

/**
 * Calls `listener` with the hash of each key whose verdict was forgotten (a change heard from any
 * process), or with nothing when every verdict was (the listener reconnected): open websockets
 * check their key again (src/server/websocket.ts). Returns the unsubscribe function.
 */
export function onKeyChange(listener: (hash?: string) => void): () => void {
  keyChangeListeners.add(listener);
  return () => keyChangeListeners.delete(listener);
}

/** The stored hash of the key an Authorization value carries (null when it carries none). */
export function keyHashOf(authorization: string | null | undefined): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  return m ? sha256(m[1]) : null;
}

export async function listApiKeys(em: EntityManager, clinicId?: number) {
  const rows = await em.find(ApiKey, clinicId ? { clinic: clinicId } : {}, { orderBy: { id: 'asc' } });
  return rows.map((k) => ({
    id: toId('ApiKey', k.id),
    clinic_id: toId('Clinic', k.clinic.id),
    name: k.name,
    prefix: k.prefix,
    scopes: k.scopes,
    created_at: k.createdAt.toISOString(),
    revoked_at: k.revokedAt?.toISOString() ?? null,
  }));
}

const keyCache = new Map<string, { principal: Principal | null; until: number }>();

/**
 * Resolves an Authorization header to a principal. Verdicts are cached per process for `ttlMs`;
 * creating or revoking a key evicts its entry in every process at once (PostgreSQL NOTIFY), and
 * the TTL bounds staleness should a notification be lost. Every failure is the same 401, so keys
 * cannot be probed.
 */
export async function authenticate(
  root: EntityManager,
  header: string | null | undefined,
  ttlMs: number,
): Promise<Principal> {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (!m) {
    throw new AppError(
      'unauthenticated',
      header
        ? 'Malformed Authorization header; expected "Bearer <API_KEY>".'
        : 'Missing Authorization header; send "Authorization: Bearer <API_KEY>".',
    );
  }
  const hash = sha256(m[1]);
  const now = Date.now();
  const hit = keyCache.get(hash);
  let principal = hit && hit.until > now ? hit.principal : undefined;
  if (principal === undefined) {
    const changesBefore = keyChangesHeard;
    const row = await root.fork().findOne(ApiKey, { hash }, { populate: ['clinic'] });
    principal =
      row && !row.revokedAt
        ? {
            keyId: toId('ApiKey', row.id),
            clinicId: row.clinic.id,
            clinicKind: row.clinic.kind,
            clinicMode: row.clinic.mode,
            country: row.clinic.country,
            scopes: new Set(row.scopes as Scope[]),
          }
        : null;
    if (keyCache.size > 10_000) keyCache.clear();
    if (keyChangesHeard === changesBefore) keyCache.set(hash, { principal, until: now + ttlMs });
  }
  if (!principal) throw new AppError('unauthenticated', 'Invalid or revoked API key.');
  return principal;
}
