import type { Clock } from '../lib/clock.ts';
import type { Limits } from '../lib/limits.ts';
import { downloadMedia } from '../media/download.ts';
import { signMediaLink } from '../media/links.ts';
import type { CallDeps } from '../services/calls/deps.ts';
import type { MediaOptions } from './chat-deps.ts';

/**
 * The call services' outside world: recordings through src/media, under the limits chat's media
 * has (size cap, timeout, SSRF guard, type sniffed), kept in the same store and linked the same way.
 */
export function callDeps(media: MediaOptions, limits: Limits, clock: Clock): CallDeps {
  return {
    recordings: {
      async keep(clinicId, mode, url) {
        const file = await downloadMedia(url, {
          declared: 'audio',
          param: 'url',
          maxBytes: limits.mediaMaxBytes,
          timeoutMs: limits.mediaDownloadTimeoutMs,
          mode,
        });
        return { key: await media.store.put(clinicId, file.bytes, file.mime), mime: file.mime };
      },
      link: (clinicId, key, filename, mime) =>
        signMediaLink(media.secret, media.baseUrl(), { clinicId, key, filename, mime }, clock.now()),
    },
  };
}
