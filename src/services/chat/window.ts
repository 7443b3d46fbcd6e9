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
  const nowMs = typeof now === 'number' ? now : now.getTime();
  // Listed conversations carry ISO text (Date#toISOString's form), which orders as the instants
  // do: one string comparison settles the usual closed window without parsing a date for it.
  if (typeof lastInboundAt === 'string' && ISO.test(lastInboundAt) && lastInboundAt <= openedAfter(nowMs))
    return null;
  const closes =
    (typeof lastInboundAt === 'string' ? Date.parse(lastInboundAt) : lastInboundAt.getTime()) +
    FREE_TEXT_WINDOW_MS;
  // Open up to, not at, its closing instant.
  return closes > nowMs ? new Date(closes).toISOString() : null;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let cutoff = { nowMs: Number.NaN, iso: '' };

/** The ISO text of `nowMs` less the window: a window opened at or before it is closed (one per request's instant). */
function openedAfter(nowMs: number): string {
  if (cutoff.nowMs !== nowMs) cutoff = { nowMs, iso: new Date(nowMs - FREE_TEXT_WINDOW_MS).toISOString() };
  return cutoff.iso;
}

export const windowOpen = (lastInboundAt: Timestamp | null | undefined, now: Date): boolean =>
  windowExpiresAt(lastInboundAt, now) !== null;
