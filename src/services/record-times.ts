import { f } from './resource.ts';

type TimeOptions = Parameters<typeof f.time>[1];

/** When a record was created and last changed: the same text on every resource, for OpenAPI and GraphQL. */
export const createdAt = (opts: TimeOptions = {}) =>
  f.time('createdAt', { description: 'When the record was created (ISO 8601, UTC).', ...opts });

export const updatedAt = (opts: TimeOptions = {}) =>
  f.time('updatedAt', {
    description:
      'When the record last changed (ISO 8601, UTC): its version, which a write can require (If-Match; expectedUpdatedAt in GraphQL).',
    ...opts,
  });
