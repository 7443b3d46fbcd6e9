/**
 * Every limit and budget of the service, with its default, in one place. `npm start` reads them
 * from the environment (src/lib/config.ts); tests and the benchmark pass their own. Documented in
 * docs/limits.md.
 */
export interface Limits {
  /** Most points a GraphQL operation may cost (src/schema/cost.ts); REST pages stay far below. */
  graphqlMaxCost: number;
  /** Deepest selection nesting of a GraphQL operation. */
  graphqlMaxDepth: number;
  /** Most aliases in a GraphQL operation (`__typename` excepted). */
  graphqlMaxAliases: number;
  /** Most lexical tokens in a GraphQL document (bounds parsing before anything else). */
  graphqlMaxTokens: number;
  /** Most directives in a GraphQL operation. */
  graphqlMaxDirectives: number;
  /** Largest request body, in bytes (GraphQL documents and variables). */
  maxBodyBytes: number;
  /** Deepest nesting of arrays and objects in a JSON body, checked before anything recurses over it. */
  maxJsonDepth: number;
  /** Points an API key may spend per window (a request spends its cost); 0 turns limiting off. */
  rateLimitPoints: number;
  /** Length of the rate-limit window, in seconds. */
  rateLimitWindowSeconds: number;
  /**
   * How long a refused request (rate limit spent, address blocked) waits before its 429: a client
   * retrying in a tight loop then costs a timer per second, not the CPU of a request per retry.
   */
  rateLimitedDelayMs: number;
  /** Failed authentications one client address may make per minute before it is refused; 0 = off. */
  authFailuresPerMinute: number;
  /**
   * Bytes of answers a client address may get per rate-limit window from introspection without
   * a key (src/server/introspection.ts; each answer counts at least 1 KiB); 0 = off.
   */
  anonymousBytesPerWindow: number;
  /** A request's work stops after this long (Node and PostgreSQL's statement_timeout). */
  requestDeadlineMs: number;
  /** A response whose data would exceed this many bytes is refused before it is built. */
  responseMaxBytes: number;
  /** How long to wait for a database connection (a new one, or a free one from the pool). */
  dbConnectTimeoutMs: number;
  /** A client must have sent its request's headers within this long after connecting or its last request. */
  headersTimeoutMs: number;
  /** A client must have sent its whole request, body included, within this long; else 408 and the connection is closed. */
  requestTimeoutMs: number;
  /** Most open client connections; a connection past it is closed at once. */
  maxConnections: number;
  /** Percent of maxConnections websockets may hold at most; the rest stays for HTTP. */
  wsConnectionsPercent: number;
  /** Most open websockets per API key, all instances on the database together (src/server/websocket-holds.ts). */
  wsMaxPerKey: number;
  /**
   * An instance's sockets stop counting against their keys' caps once its heartbeat (every third
   * of this) is older than this: how long a killed instance's sockets still count, at most.
   */
  wsInstanceTimeoutMs: number;
  /** Most websockets per client address not yet past connection_init. */
  wsMaxUnauthenticatedPerAddress: number;
  /** Most operations at once on one websocket (subscriptions, and queries not yet answered). */
  wsMaxOperationsPerSocket: number;
  /** A websocket past connection_init that runs no operation for this long is closed. */
  wsIdleTimeoutMs: number;
  /** Largest media file a send downloads (spec: up to 16 MB). */
  mediaMaxBytes: number;
  /** How long a media download may take, redirects included. */
  mediaDownloadTimeoutMs: number;
  /** Events older than this many days are deleted, with their webhook deliveries (docs/limits.md, Events); 0 keeps them. */
  eventRetentionDays: number;
  /** How long a webhook receiver has to answer a delivery (connecting included); longer is a failed attempt. */
  webhookTimeoutMs: number;
}

export const defaultLimits: Limits = {
  graphqlMaxCost: 10_000,
  graphqlMaxDepth: 12,
  graphqlMaxAliases: 30,
  graphqlMaxTokens: 2_000,
  graphqlMaxDirectives: 30,
  maxBodyBytes: 1 << 20,
  maxJsonDepth: 32,
  rateLimitPoints: 30_000,
  rateLimitWindowSeconds: 10,
  rateLimitedDelayMs: 1_000,
  authFailuresPerMinute: 30,
  anonymousBytesPerWindow: 1 << 20,
  requestDeadlineMs: 10_000,
  responseMaxBytes: 16 << 20,
  dbConnectTimeoutMs: 3_000,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  maxConnections: 2_000,
  wsConnectionsPercent: 50,
  wsMaxPerKey: 50,
  wsInstanceTimeoutMs: 15_000,
  wsMaxUnauthenticatedPerAddress: 20,
  wsMaxOperationsPerSocket: 100,
  wsIdleTimeoutMs: 60_000,
  mediaMaxBytes: 16 << 20,
  mediaDownloadTimeoutMs: 8_000,
  eventRetentionDays: 30,
  webhookTimeoutMs: 10_000,
};
