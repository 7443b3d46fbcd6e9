import { defineEntity, p } from '@mikro-orm/core';
import { tenantColumns } from './tenant.ts';

/**
 * A file the service keeps (src/media/store.ts): the bytes of a downloaded media.url, in
 * PostgreSQL so every instance serves every signed link. Written once, never updated.
 */
const MediaObjectSchema = defineEntity({
  name: 'MediaObject',
  properties: {
    ...tenantColumns(),
    /** The sniffed type: image/jpeg, image/png or application/pdf. */
    mime: p.string(),
    /** Bytes. */
    size: p.integer(),
    /** Hex SHA-256 of the bytes. */
    sha256: p.string().length(64),
    bytes: p.blob(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export class MediaObject extends MediaObjectSchema.class {}
MediaObjectSchema.setClass(MediaObject);
