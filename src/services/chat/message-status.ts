/**
 * Outbound message status, derived from its timestamps (spec, States: outbound message status).
 * A terminal state wins over progress: a message that failed after it was sent is failed; read
 * implies delivered and delivered implies sent, whatever order the receipts arrived in.
 */
export interface MessageTimestamps {
  sent_at: string | null;
  delivered_at: string | null;
  read_at: string | null;
  failed_at: string | null;
}

export type OutboundStatus = 'queued' | 'sent' | 'delivered' | 'read' | 'failed';

export function outboundStatus(t: MessageTimestamps | MessageTimes): OutboundStatus {
  if ('failedAt' in t) {
    // A message row (entity property names): no timestamps object is made for it.
    if (t.failedAt) return 'failed';
    if (t.readAt) return 'read';
    if (t.deliveredAt) return 'delivered';
    if (t.sentAt) return 'sent';
    return 'queued';
  }
  if (t.failed_at) return 'failed';
  if (t.read_at) return 'read';
  if (t.delivered_at) return 'delivered';
  if (t.sent_at) return 'sent';
  return 'queued';
}

/** The same times as a message row holds them. */
export interface MessageTimes {
  sentAt: unknown;
  deliveredAt: unknown;
  readAt: unknown;
  failedAt: unknown;
}

/**
 * The timestamps after a receipt. Idempotent: a receipt seen again keeps the first time it was
 * recorded, so a duplicate changes nothing but `updated_at` (which every receipt bumps).
 */
export function applyReceipt(
  t: MessageTimestamps,
  receipt: { status: 'sent' | 'delivered' | 'read' | 'failed'; at: string },
): MessageTimestamps {
  const key = `${receipt.status}_at` as keyof MessageTimestamps;
  return t[key] ? t : { ...t, [key]: receipt.at };
}
