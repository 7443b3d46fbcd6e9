import { logger } from '../../lib/logger.ts';
import type { EventRow } from './envelope.ts';

/** An outbox row as the relay read it back: what the envelope is made of, and who may see it. */
export interface LiveEvent extends EventRow {
  clinicId: number;
  /** The scope a reader needs besides webhooks:manage (chat:read for chat.*), as stored. */
  scope: string;
}

type Listener = (event: LiveEvent) => void;

/**
 * This process's fan-out of committed events to its subscribers, by clinic: a subscriber is only
 * ever handed its own clinic's events. The relay (relay.ts) publishes what PostgreSQL announced,
 * once per event, in ascending id order; subscriptions filter further (types, scopes) on their side.
 */
export class EventHub {
  private readonly byClinic = new Map<number, Set<Listener>>();
  private mark = 0;
  private count = 0;
  /** Ids announced as committed and not yet published (the relay's idle pace leaves some). */
  private readonly announced = new Set<number>();
  /** Called as a subscriber arrives: the relay, idle without subscribers, catches up at once. */
  onSubscribe: (() => void) | null = null;

  /**
   * Every event id up to this one has been published, or will never commit (the relay waits for
   * writes in flight before moving it). A replay (`events(after:)`) reads the outbox up to here and
   * takes the rest live: what is published after it subscribed is exactly what lies above.
   */
  get watermark(): number {
    return this.mark;
  }

  /** Called by the relay at the end of each advance (not per event: the purge walks the set). */
  advance(id: number): void {
    if (id > this.mark) this.mark = id;
    for (const a of this.announced) if (a <= id) this.announced.delete(a);
  }

  /**
   * The watermark, extended through the ids announced as committed in one unbroken run just above
   * it: every id up to here is committed (or never will be), published or not yet: where a
   * subscription without `after` starts (the relay, behind at its idle pace, publishes them later).
   */
  settledUpTo(): number {
    let settled = this.mark;
    while (this.announced.has(settled + 1)) settled++;
    return settled;
  }

  /** An id PostgreSQL announced as committed (the relay, as it hears it). */
  announce(id: number): void {
    if (id > this.mark) this.announced.add(id);
  }

  /**
   * `listener` gets the clinic's events published from now on: every one above the watermark it
   * read. `fromNow` (a subscription without `after`): not those the relay would have published
   * already had it kept up, however far behind it is (idle, it advances every 100 ms): the ids
   * announced as committed in one unbroken run just above the watermark (nothing below them is
   * still in flight). An announced id above a gap still comes, with the lower ones, so what the
   * subscriber sees is every event above some id, as before.
   */
  subscribe(clinicId: number, listener: Listener, opts: { fromNow?: boolean } = {}): () => void {
    let set = this.byClinic.get(clinicId);
    if (!set) {
      set = new Set();
      this.byClinic.set(clinicId, set);
    }
    let own = listener;
    const settled = opts.fromNow ? this.settledUpTo() : this.mark;
    if (settled > this.mark) {
      own = (e) => {
        if (e.id > settled) listener(e);
      };
    }
    const size = set.size;
    set.add(own);
    if (set.size > size) this.count++;
    this.onSubscribe?.();
    return () => {
      if (set.delete(own)) this.count--;
      if (set.size === 0 && this.byClinic.get(clinicId) === set) this.byClinic.delete(clinicId);
    };
  }

  /** Ids only ascend: the relay publishes an event once every lower id has settled. */
  publish(event: LiveEvent): void {
    if (event.id > this.mark) this.mark = event.id;
    const set = this.byClinic.get(event.clinicId);
    if (!set) return;
    for (const listener of [...set]) {
      // One subscriber's failure is its own: the others, and the events after it, still go.
      try {
        listener(event);
      } catch (err) {
        logger.warn({ err, event: event.id }, 'an event subscriber failed');
      }
    }
  }

  /** Subscribers, all clinics together (the relay reads no rows while there are none). */
  get size(): number {
    return this.count;
  }
}
