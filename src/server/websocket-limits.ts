import type { WebSocket } from 'ws';

/**
 * What one integrator may hold on graphql-ws (docs/limits.md, Websockets). Upgraded sockets stay
 * the HTTP server's connections (they count against maxConnections), so without these one key
 * holding idle sockets could leave no connection for anyone else's HTTP requests.
 */
export interface SocketLimits {
  /**
   * Most open sockets per API key. Checked here in this process alone (a refusal without a round
   * trip); all instances together are counted in PostgreSQL (websocket-holds.ts).
   */
  perKey: number;
  /** Most sockets per client address that have not yet been acknowledged (connection_init). */
  unauthenticatedPerAddress: number;
  /** Most operations (subscriptions, and queries not yet answered) at once on one socket. */
  operationsPerSocket: number;
  /** An acknowledged socket that runs no operation for this long is closed; 0 never closes one. */
  idleMs: number;
  /** Most websockets of the process: the rest of maxConnections stays for HTTP. */
  total: number;
}

/** Refused for its key or its address: the graphql-ws client retries later, with its backoff. */
export const TOO_MANY_CLOSE = { code: 4429, reason: 'Too many connections' } as const;
/** The process's share of websockets is taken (RFC 6455's "Try Again Later"). */
export const FULL_CLOSE = { code: 1013, reason: 'Try again later: no websocket capacity' } as const;
/** A normal closure: graphql-ws's client reconnects by itself only when it has a subscription. */
export const IDLE_CLOSE = { code: 1000, reason: 'Idle: no operation' } as const;

interface Held {
  address: string;
  /** Set once connection_init was accepted. */
  keyId: string | null;
  /** The operations of the socket (graphql-ws's `ctx.subscriptions`), once acknowledged. */
  operations: Record<string, unknown> | null;
  lastActive: number;
}

const bump = (counts: Map<string, number>, key: string, by: number) => {
  const n = (counts.get(key) ?? 0) + by;
  if (n > 0) counts.set(key, n);
  else counts.delete(key);
};

/**
 * The bookkeeping of the caps, per socket. Each check and the count it guards happen in one
 * synchronous step, so concurrent handshakes cannot both take the last place.
 */
export class SocketGate {
  private readonly held = new Map<WebSocket, Held>();
  private readonly pendingByAddress = new Map<string, number>();
  private readonly byKey = new Map<string, number>();
  private readonly sweep: NodeJS.Timeout | null;

  private readonly limits: SocketLimits;
  private readonly now: () => number;

  constructor(limits: SocketLimits, now: () => number = () => performance.now()) {
    this.limits = limits;
    this.now = now;
    // A quarter of the idle time between looks: an idle socket lives at most 1.25 times it.
    this.sweep =
      limits.idleMs > 0
        ? setInterval(() => this.closeIdle(), Math.min(Math.max(limits.idleMs / 4, 50), 5_000))
        : null;
    this.sweep?.unref();
  }

  /**
   * A socket just upgraded; `open` counts every websocket of the process, this one included.
   * Returns how to close it when it is over a cap, else tracks it until its `close` event.
   */
  admit(socket: WebSocket, address: string, open: number): { code: number; reason: string } | null {
    if (open > this.limits.total) return FULL_CLOSE;
    if ((this.pendingByAddress.get(address) ?? 0) >= this.limits.unauthenticatedPerAddress)
      return TOO_MANY_CLOSE;
    bump(this.pendingByAddress, address, 1);
    this.held.set(socket, { address, keyId: null, operations: null, lastActive: this.now() });
    socket.once('close', () => this.release(socket));
    return null;
  }

  /** connection_init passed authentication: false when the key already holds its share of sockets. */
  acknowledge(socket: WebSocket, keyId: string, operations: Record<string, unknown>): boolean {
    const held = this.held.get(socket);
    if (!held || held.keyId) return false;
    if ((this.byKey.get(keyId) ?? 0) >= this.limits.perKey) return false;
    bump(this.pendingByAddress, held.address, -1);
    bump(this.byKey, keyId, 1);
    held.keyId = keyId;
    held.operations = operations;
    held.lastActive = this.now();
    return true;
  }

  /** A new operation on the socket; false when the socket already runs its most. */
  startOperation(socket: WebSocket): boolean {
    const held = this.held.get(socket);
    if (!held?.operations) return false;
    held.lastActive = this.now();
    // graphql-ws registers the operation before asking us: it counts itself.
    return Object.keys(held.operations).length <= this.limits.operationsPerSocket;
  }

  /** Sockets of a key (tests). */
  socketsOf(keyId: string): number {
    return this.byKey.get(keyId) ?? 0;
  }

  stop() {
    if (this.sweep) clearInterval(this.sweep);
  }

  private release(socket: WebSocket) {
    const held = this.held.get(socket);
    if (!held) return;
    this.held.delete(socket);
    if (held.keyId) bump(this.byKey, held.keyId, -1);
    else bump(this.pendingByAddress, held.address, -1);
  }

  private closeIdle() {
    const now = this.now();
    for (const [socket, held] of this.held) {
      if (!held.operations) continue;
      if (Object.keys(held.operations).length > 0) held.lastActive = now;
      else if (now - held.lastActive >= this.limits.idleMs) socket.close(IDLE_CLOSE.code, IDLE_CLOSE.reason);
    }
  }
}
