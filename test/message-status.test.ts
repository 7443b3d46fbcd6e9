import { describe, expect, it } from 'vitest';
import { applyReceipt, type MessageTimestamps, outboundStatus } from '../src/services/chat/message-status.ts';

const none: MessageTimestamps = { sent_at: null, delivered_at: null, read_at: null, failed_at: null };
type Status = 'sent' | 'delivered' | 'read' | 'failed';
const receipts = (order: Status[]) =>
  order.reduce((t, status, i) => applyReceipt(t, { status, at: `2026-11-23T10:00:0${i}Z` }), none);

describe('outbound message status (spec: States)', () => {
  it('is queued until the network accepts, then follows the receipts', () => {
    expect(outboundStatus(none)).toBe('queued');
    expect(outboundStatus(receipts(['sent']))).toBe('sent');
    expect(outboundStatus(receipts(['sent', 'delivered']))).toBe('delivered');
    expect(outboundStatus(receipts(['sent', 'delivered', 'read']))).toBe('read');
  });

  it('does not depend on the order receipts arrive in', () => {
    expect(outboundStatus(receipts(['read', 'sent', 'delivered']))).toBe('read');
    expect(outboundStatus(receipts(['delivered', 'sent']))).toBe('delivered');
  });

  it('lets a terminal failure win over progress, before or after it', () => {
    expect(outboundStatus(receipts(['sent', 'failed']))).toBe('failed');
    expect(outboundStatus(receipts(['failed', 'sent']))).toBe('failed');
    expect(outboundStatus(receipts(['failed']))).toBe('failed');
  });

  it('keeps the first time of a receipt seen twice', () => {
    const once = receipts(['sent']);
    const twice = applyReceipt(once, { status: 'sent', at: '2026-11-23T11:00:00Z' });
    expect(twice).toBe(once);
    expect(twice.sent_at).toBe('2026-11-23T10:00:00Z');
  });
});
