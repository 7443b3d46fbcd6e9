import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { systemWrite } from '../db/system-write.ts';
import { Clinic, MediaObject } from '../entities/index.ts';
import { scopedEm } from '../lib/request-context.ts';

/**
 * Where the service keeps its copy of media (spec, Chat: write: "the service keeps its own copy,
 * so media stays readable via the media endpoint after the supplied link expires"). A key is
 * opaque and meaningful only with its clinic: `get` with another clinic's id finds nothing.
 */
export interface MediaStore {
  /** Stores the bytes for the clinic; returns the key to read them back with. */
  put(clinicId: number, bytes: Buffer, mime: string): Promise<string>;
  /** The bytes and type under `key` for the clinic, or null (unknown key, another clinic's, malformed). */
  get(clinicId: number, key: string): Promise<{ bytes: Buffer; mime: string } | null>;
}

const KEY = /^med_([1-9]\d{0,9})$/;

/**
 * The default store: one `media_object` row per file, bytes in a bytea column, so every instance
 * on the database serves every object. Each call runs on a fork of `root` bound to the clinic:
 * the tenant filter scopes the read, as for every clinic-owned entity. The write is a system
 * write (src/db/system-write.ts), not a write of the clinic: bytes no record names yet, which no
 * client sees until a clinic write references them, with no event. It commits on its own, outside
 * any request transaction (a file stored for a send that then fails stays, unreferenced), and is
 * not one of the request's writes (that send's Idempotency-Key stays free for its retry).
 */
export function pgMediaStore(root: EntityManager): MediaStore {
  return {
    async put(clinicId, bytes, mime) {
      // Inside a transaction (the demo seed), in it: its clinic may not be committed yet.
      const em = root.isInTransaction() ? root : scopedEm(root, clinicId);
      const object = await systemWrite(em, async (tx) =>
        tx.create(MediaObject, {
          clinic: tx.getReference(Clinic, clinicId),
          mime,
          size: bytes.length,
          sha256: createHash('sha256').update(bytes).digest('hex'),
          bytes,
        }),
      );
      return `med_${object.id}`;
    },
    async get(clinicId, key) {
      const m = KEY.exec(key);
      if (!m || Number(m[1]) > 2 ** 31 - 1) return null;
      const em = scopedEm(root, clinicId);
      const object = await em.findOne(MediaObject, { id: Number(m[1]) });
      if (!object) return null;
      const { bytes } = object;
      return { bytes: Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes), mime: object.mime };
    },
  };
}
