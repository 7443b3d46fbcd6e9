import { redactCardData } from '../lib/card-numbers.ts';
import type { AppError } from '../lib/errors.ts';

/** RFC 6455: a close frame's reason is at most 123 bytes of UTF-8. */
export const MAX_CLOSE_REASON_BYTES = 123;

/**
 * A refused or ended websocket's close reason: `code: message`, REST's error code and message for
 * the same refusal (`unauthenticated: Invalid or revoked API key.`), so a client reads the same
 * words whichever transport refused it. A longer one is cut at a character boundary and ends with
 * `…`; the code always survives.
 */
export function closeReason(err: AppError): string {
  const full = `${err.code}: ${redactCardData(err.message)}`;
  if (Buffer.byteLength(full) <= MAX_CLOSE_REASON_BYTES) return full;
  const room = MAX_CLOSE_REASON_BYTES - Buffer.byteLength('…');
  let cut = '';
  for (const ch of full) {
    if (Buffer.byteLength(cut + ch) > room) break;
    cut += ch;
  }
  return `${cut}…`;
}
