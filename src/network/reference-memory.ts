/**
 * The network ids the sandbox gave each client reference, for as long as the service may try a
 * send again: a long-running process must not keep every reference it ever saw. An entry lives
 * `ttlMs` from its send (a message's attempts span about 10 minutes, send-jobs.ts SEND_RETRY, so
 * an hour covers them) and at most `max` entries are kept, the oldest dropped first. Time is the
 * process's monotonic clock, not the injected one: tests move that one freely, backwards too.
 */
export interface ReferenceMemoryOptions {
  ttlMs: number;
  max: number;
}

export const REFERENCE_MEMORY_DEFAULTS: ReferenceMemoryOptions = { ttlMs: 60 * 60 * 1000, max: 50_000 };

export class ReferenceMemory {
  readonly #opts: ReferenceMemoryOptions;
  readonly #now: () => number;
  /** Insertion order is age order: a Map iterates oldest first. */
  readonly #entries = new Map<string, { networkMessageId: string; at: number }>();

  constructor(opts: Partial<ReferenceMemoryOptions> = {}, now: () => number = () => performance.now()) {
    this.#opts = { ...REFERENCE_MEMORY_DEFAULTS, ...opts };
    this.#now = now;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(reference: string): string | undefined {
    this.#evict();
    return this.#entries.get(reference)?.networkMessageId;
  }

  set(reference: string, networkMessageId: string): void {
    this.#entries.delete(reference);
    this.#entries.set(reference, { networkMessageId, at: this.#now() });
    this.#evict();
  }

  #evict(): void {
    const oldest = this.#now() - this.#opts.ttlMs;
    for (const [reference, entry] of this.#entries) {
      if (entry.at > oldest && this.#entries.size <= this.#opts.max) break;
      this.#entries.delete(reference);
    }
  }
}
