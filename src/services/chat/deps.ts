import type { ClinicMode } from '../../lib/clinic-mode.ts';
import type { ChatNetworks } from './networks.ts';

/** What the chat services talk to: the messaging network of each clinic mode and the media store. */
export interface ChatDeps {
  /** Resolved per request from the key's clinic (networkOf): never one network per process. */
  networks: ChatNetworks;
  media?: ChatMedia;
  /** After this long an unanswered Idempotency-Key claim has no request left working on it. */
  idempotencyLeaseMs: number;
}

/** Media, as the chat services use it (src/media behind it; wired in src/server/chat-deps.ts). */
export interface ChatMedia {
  /** Downloads and checks a caller's file (422s on media.url), keeps a copy; the stored key. */
  keep(
    clinicId: number,
    /** The clinic's mode: which URLs may be fetched (src/lib/address-policy.ts). */
    mode: ClinicMode,
    media: { type: 'image' | 'document'; url: string; filename: string | null },
  ): Promise<{ key: string; mime: string; filename: string | null }>;
  /** Copies the network's media of an inbound message into the store, typed by its bytes; the stored key. */
  copy(clinicId: number, mode: ClinicMode, url: string): Promise<string>;
  /** A signed link to a stored object, valid about 10 hours. */
  link(
    clinicId: number,
    key: string,
    filename: string | null,
    mime: string,
  ): { url: string; expires_at: string };
}

declare module '../../lib/request-context.ts' {
  interface AppServices {
    chat: ChatDeps;
  }
}
