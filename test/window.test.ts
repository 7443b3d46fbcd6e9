import { describe, expect, it } from 'vitest';
import { FREE_TEXT_WINDOW_MS, windowExpiresAt } from '../src/services/chat/window.ts';

const at = (iso: string) => Date.parse(iso);
const inbound = '2026-11-23T10:00:00.000Z';
const closes = '2026-11-24T10:00:00.000Z';

describe('free-text window (spec: States)', () => {
  it('is open up to, not at, 24 hours after the last inbound message, from ISO text or a Date', () => {
    for (const last of [inbound, new Date(inbound)]) {
      expect(windowExpiresAt(last, at('2026-11-23T10:00:00.000Z'))).toBe(closes);
      expect(windowExpiresAt(last, at('2026-11-24T09:59:59.999Z'))).toBe(closes);
      expect(windowExpiresAt(last, new Date('2026-11-24T09:59:59.999Z'))).toBe(closes);
      expect(windowExpiresAt(last, at(closes))).toBeNull();
      expect(windowExpiresAt(last, at(closes) + 1)).toBeNull();
    }
  });

  it('agrees with date arithmetic for text of another form and across the instants of many requests', () => {
    expect(windowExpiresAt('2026-11-23T10:00:00Z', at('2026-11-24T09:59:59.999Z'))).toBe(closes);
    expect(windowExpiresAt('2026-11-23T10:00:00Z', at(closes))).toBeNull();
    const base = at(inbound);
    for (let i = 0; i < 200; i++) {
      const last = new Date(base + i * 997_331).toISOString();
      const now = base + FREE_TEXT_WINDOW_MS + (i % 2 ? 1 : -1) * i * 611_519;
      const expected = Date.parse(last) + FREE_TEXT_WINDOW_MS > now;
      expect(windowExpiresAt(last, now) !== null).toBe(expected);
    }
  });

  it('is null when the patient never wrote', () => {
    expect(windowExpiresAt(null, Date.now())).toBeNull();
    expect(windowExpiresAt(undefined, Date.now())).toBeNull();
  });
});
