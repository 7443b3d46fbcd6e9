import { defineEntity, p } from '@mikro-orm/core';
import { Clinic } from './clinic.ts';

const ApiKeySchema = defineEntity({
  name: 'ApiKey',
  properties: {
    id: p.integer().primary().autoincrement(),
    clinic: () => p.manyToOne(Clinic).index(),
    name: p.string(),
    /** The first characters of the key, so people can tell keys apart; never enough to use. */
    prefix: p.string(),
    /** SHA-256 of the whole key. The key itself is shown once and never stored. */
    hash: p.string().unique(),
    scopes: p.array(),
    createdAt: p.datetime().onCreate(() => new Date()),
    lastUsedAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
  },
});

export class ApiKey extends ApiKeySchema.class {}
ApiKeySchema.setClass(ApiKey);
