import { afterEach, describe, expect, it } from 'vitest';
import { FixedClock } from '../src/lib/clock.ts';
import type { OutboundMessage } from '../src/network/adapter.ts';
import { ReferenceMemory } from '../src/network/reference-memory.ts';
import { SandboxNetwork } from '../src/network/sandbox.ts';

/**
 * The sandbox's client-reference dedupe is bounded (issue 17 review): a long-running service
 * must not remember every reference it was ever sent.
 */
const networks: SandboxNetwork[] = [];
afterEach(() => {
  for (const n of networks.splice(0)) n.close();
});

function sandbox(references: { ttlMs?: number; max?: number }) {
  // Receipts kept nowhere: nothing here calls back (their queue: test/sandbox-receipts-kill.test.ts).
  const n = new SandboxNetwork({
    callbackUrl: () => 'http://127.0.0.1:9/unused',
    secret: 'x',
    clock: new FixedClock('2026-11-01T10:00:00Z'),
    delays: { sent: 1e8, delivered: 1e8, read: 1e8 },
    references,
    receipts: { schedule: async () => {}, settle: async () => {}, close: () => {} },
  });
  networks.push(n);
  return n;
}

const text = (reference: string): OutboundMessage => ({
  kind: 'text',
  from: '+972500000001',
  to: '+972500000002',
  text: 'hi',
  reference,
});

describe('sandbox client references', () => {
  it('a repeated reference is answered with the first network id while remembered', async () => {
    const n = sandbox({ max: 3 });
    const first = await n.send(text('out_1'));
    expect(await n.send(text('out_1'))).toEqual(first);
    expect(n.sent).toHaveLength(1);
  });

  it('keeps at most `max` references, the oldest dropped first', async () => {
    const n = sandbox({ max: 3 });
    const first = await n.send(text('out_1'));
    for (let i = 2; i <= 1000; i++) await n.send(text(`out_${i}`));
    expect(n.rememberedReferences).toBe(3);
    // out_1 was forgotten: it is taken as a new send.
    const again = await n.send(text('out_1'));
    expect(again.networkMessageId).not.toBe(first.networkMessageId);
    // The newest are still answered.
    const last = n.sent.find((s) => s.reference === 'out_1000')?.networkMessageId;
    expect((await n.send(text('out_1000'))).networkMessageId).toBe(last);
  });

  it('forgets a reference after its time to live', () => {
    let now = 0;
    const memory = new ReferenceMemory({ ttlMs: 1000, max: 100 }, () => now);
    memory.set('out_1', 'sbx_1');
    now = 999;
    memory.set('out_2', 'sbx_2');
    expect(memory.get('out_1')).toBe('sbx_1');
    now = 1000;
    expect(memory.get('out_1')).toBeUndefined();
    expect(memory.get('out_2')).toBe('sbx_2');
    expect(memory.size).toBe(1);
    now = 5000;
    expect(memory.get('out_2')).toBeUndefined();
    expect(memory.size).toBe(0);
  });
});
