import type { Clock } from '../lib/clock.ts';
import type { Limits } from '../lib/limits.ts';
import { downloadMedia } from '../media/download.ts';
import { documentFilename } from '../media/filename.ts';
import { signMediaLink } from '../media/links.ts';
import type { MediaStore } from '../media/store.ts';
import type { MessagingNetwork } from '../network/adapter.ts';
import type { ChatDeps } from '../services/chat/deps.ts';

export interface MediaOptions {
  store: MediaStore;
  /** The HMAC key of media links (MEDIA_LINK_SECRET); every instance needs the same one. */
  secret: string;
  /** Where this service is reached (PUBLIC_URL, or the address it listens on). */
  baseUrl: () => string;
  /** ALLOW_LOOPBACK_URLS: plain http to loopback addresses, for tests and local development. */
  allowLoopback: boolean;
}

/** Downloads a file within the media limits (src/media/download.ts). */
const downloader =
  (limits: Limits, allowLoopback: boolean) =>
  (url: string, declared: 'image' | 'document' | 'any', fallbackMime?: string) =>
    downloadMedia(url, {
      declared,
      maxBytes: limits.mediaMaxBytes,
      timeoutMs: limits.mediaDownloadTimeoutMs,
      allowLoopback,
      ...(fallbackMime ? { fallbackMime } : {}),
    });

/** Copies a network's media into the store (the callback, and the CLI's simulated patient). */
export function mediaCopier(store: MediaStore, limits: Limits, allowLoopback: boolean) {
  const download = downloader(limits, allowLoopback);
  return async (clinicId: number, url: string, mime: string) => {
    const file = await download(url, 'any', mime);
    return store.put(clinicId, file.bytes, file.mime);
  };
}

/** The chat services' outside world: the network, and media through src/media. */
export function chatDeps(
  network: MessagingNetwork,
  media: MediaOptions,
  limits: Limits,
  clock: Clock,
): ChatDeps {
  const download = downloader(limits, media.allowLoopback);
  return {
    network,
    // The deadline stops a request at its next statement; a minute more covers a media
    // download under way then (the network is called by the send worker, not the request).
    idempotencyLeaseMs: limits.requestDeadlineMs + 60_000,
    media: {
      async keep(clinicId, m) {
        const file = await download(m.url, m.type);
        const filename = m.type === 'document' ? documentFilename(m.filename, file.filename) : null;
        return { key: await media.store.put(clinicId, file.bytes, file.mime), mime: file.mime, filename };
      },
      copy: mediaCopier(media.store, limits, media.allowLoopback),
      link: (clinicId, key, filename, mime) =>
        signMediaLink(media.secret, media.baseUrl(), { clinicId, key, filename, mime }, clock.now()),
    },
  };
}
