import { notFound } from '../../lib/errors.ts';
import type { ServiceContext } from '../../lib/request-context.ts';
import { defineShape, f, type View } from '../resource.ts';
import type { ChatDeps } from './deps.ts';
import { getMessageRow } from './messages.ts';

/** Spec, Media link: `{url, expires_at}`; the link is signed and valid about 10 hours. */
export const MediaLink = defineShape(
  'MediaLink',
  {
    url: f.key('url', 'String', {
      description:
        "A signed link to the service's own copy; anyone holding it can fetch the file until it expires.",
    }),
    expires_at: f.key('expires_at', 'String', { description: 'When the link stops working (ISO 8601).' }),
  },
  "A time-limited link to a message's media.",
);

const mediaColumns = {
  read: { fields: ['direction', 'mediaPath', 'mediaMime', 'mediaFilename', 'mediaType'], joins: {} },
  present: (r: Record<string, unknown>) => r,
  key: 'message-media',
} as View;

/** GET /v1/chat/messages/{id}/media: 404 for an unknown message and for one without media. */
export async function getMessageMedia(
  ctx: ServiceContext,
  deps: ChatDeps,
  id: string,
): Promise<{ url: string; expires_at: string }> {
  const row = await getMessageRow(ctx, id, mediaColumns);
  if (!row.mediaPath || !deps.media) throw notFound('media of message', id);
  return deps.media.link(ctx.principal.clinicId, row.mediaPath, row.mediaFilename ?? null, row.mediaMime);
}
