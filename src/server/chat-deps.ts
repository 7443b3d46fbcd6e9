import type { ClinicMode } from '../lib/clinic-mode.ts';
import type { Clock } from '../lib/clock.ts';
import type { Limits } from '../lib/limits.ts';
import { downloadMedia } from '../media/download.ts';
import { documentFilename } from '../media/filename.ts';
import { signMediaLink } from '../media/links.ts';
import type { MediaStore } from '../media/store.ts';
import type { ChatDeps } from '../services/chat/deps.ts';
import type { ChatNetworks } from '../services/chat/networks.ts';

export interface MediaOptions {
  store: MediaStore;
  /** The HMAC key of media links (MEDIA_LINK_SECRET); every instance needs the same one. */
  secret: string;
  /** Where this service is reached (PUBLIC_URL, or the address it listens on). */
  baseUrl: () => string;
}

/** Downloads a file within the media limits, under the clinic's URL policy (src/media/download.ts). */
const downloader =
  (limits: Limits) => (mode: ClinicMode, url: string, declared: 'image' | 'document' | 'any') =>
    downloadMedia(url, {
      declared,
      maxBytes: limits.mediaMaxBytes,
      timeoutMs: limits.mediaDownloadTimeoutMs,
      mode,
    });

/**
 * Copies a network's media into the store (the callback, and the CLI's simulated patient), typed
 * by its bytes alone: the type the network declares stays the message's record of what was sent,
 * never the stored file's (src/media/served-type.ts).
 */
export function mediaCopier(store: MediaStore, limits: Limits) {
  const download = downloader(limits);
  return async (clinicId: number, mode: ClinicMode, url: string) => {
    const file = await download(mode, url, 'any');
    return store.put(clinicId, file.bytes, file.mime);
  };
}

/** The chat services' outside world: the networks, and media through src/media. */
export function chatDeps(
  networks: ChatNetworks,
  media: MediaOptions,
  limits: Limits,
  clock: Clock,
): ChatDeps {
  const download = downloader(limits);
  return {
    networks,
    // The deadline stops a request at its next statement; a minute more covers a media
    // download under way then (the network is called by the send worker, not the request).
    idempotencyLeaseMs: limits.requestDeadlineMs + 60_000,
    media: {
      async keep(clinicId, mode, m) {
        const file = await download(mode, m.url, m.type);
        const filename = m.type === 'document' ? documentFilename(m.filename, file.filename) : null;
        return { key: await media.store.put(clinicId, file.bytes, file.mime), mime: file.mime, filename };
      },
      copy: mediaCopier(media.store, limits),
      link: (clinicId, key, filename, mime) =>
        signMediaLink(media.secret, media.baseUrl(), { clinicId, key, filename, mime }, clock.now()),
    },
  };
}
