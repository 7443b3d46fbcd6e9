import { describe, expect, it } from 'vitest';
import { asyncQueue } from '../src/lib/async-queue.ts';

/** The subscriptions' queue (src/lib/async-queue.ts): bounded, and a producer can wait for room. */
describe('asyncQueue bounds', () => {
  it('a client that does not read: beyond maxBuffered nothing is kept, the source is let go, the next read fails', async () => {
    let closes = 0;
    const q = asyncQueue<number>(() => closes++, { maxBuffered: 3, overflow: () => new Error('too slow') });
    for (let i = 0; i < 10; i++) q.push(i);
    expect(closes).toBe(1);
    expect(q.closed).toBe(true);
    await expect(q.next()).rejects.toThrow('too slow');
    expect(await q.next()).toEqual({ value: undefined, done: true });
    expect(closes).toBe(1);
  });

  it('within the bound, values come in order; below(n) waits until the client has read enough', async () => {
    const q = asyncQueue<number>(() => {}, { maxBuffered: 10, overflow: () => new Error('too slow') });
    for (let i = 0; i < 5; i++) q.push(i);
    let released = false;
    const room = q.below(3).then(() => {
      released = true;
    });
    await Promise.resolve();
    expect(released).toBe(false);
    expect((await q.next()).value).toBe(0);
    expect((await q.next()).value).toBe(1);
    expect(released).toBe(false);
    expect((await q.next()).value).toBe(2);
    await room;
    expect(released).toBe(true);
    expect((await q.next()).value).toBe(3);
  });

  it('below() resolves when the client goes away', async () => {
    const q = asyncQueue<number>(() => {});
    for (let i = 0; i < 5; i++) q.push(i);
    let released = false;
    q.below(1).then(() => {
      released = true;
    });
    await settled();
    expect(released).toBe(false);
    await q.return?.();
    // Asserted, not awaited: a producer left waiting would otherwise show as a test timeout.
    await settled();
    expect(released).toBe(true);
    expect(q.closed).toBe(true);
  });
});

/** Every promise callback queued so far has run (a macrotask later). */
const settled = () => new Promise<void>((resolve) => setImmediate(resolve));
