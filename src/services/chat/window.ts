import type { Timestamp } from '../../lib/timestamps.ts';

/**
 * The messaging network's free-text window (spec, States: free-text window): it opens each time
 * the patient writes and lasts 24 hours. Free text, captions and reactions need it open.
 */
export const FREE_TEXT_WINDOW_MS = 24 * 3600_000;

/** When the window closes, or null when it is closed (or never opened). */
export function windowExpiresAt(
  lastInboundAt: Timestamp | null | undefined,
  now: Date | number,
): string | null {
  if (lastInboundAt == null) return null;
  // Date.parse: no Date object for the (usual) closed window, read for every conversation listed.
  const closes =
    (typeof lastInboundAt === 'string' ? Date.parse(lastInboundAt) : lastInboundAt.getTime()) +
    FREE_TEXT_WINDOW_MS;
  // Open up to, not at, its closing instant.
  return closes > (typeof now === 'number' ? now : now.getTime()) ? new Date(closes).toISOString() : null;
}

export const windowOpen = (lastInboundAt: Timestamp | null | undefined, now: Date): boolean =>
  windowExpiresAt(lastInboundAt, now) !== null;
