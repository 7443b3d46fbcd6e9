import type { EventRow } from '../../webhooks/signing.ts';

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
 * once per event; subscriptions filter further (types, scopes) on their side.
 */
export class EventHub {
  private readonly byClinic = new Map<number, Set<Listener>>();

  subscribe(clinicId: number, listener: Listener): () => void {
    let set = this.byClinic.get(clinicId);
    if (!set) {
      set = new Set();
      this.byClinic.set(clinicId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.byClinic.get(clinicId) === set) this.byClinic.delete(clinicId);
    };
  }

  publish(event: LiveEvent): void {
    const set = this.byClinic.get(event.clinicId);
    if (!set) return;
    for (const listener of [...set]) listener(event);
  }

  /** Subscribers, all clinics together (tests, the fan-out benchmark). */
  get size(): number {
    let n = 0;
    for (const set of this.byClinic.values()) n += set.size;
    return n;
  }
}
