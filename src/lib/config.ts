import { z } from 'zod';
import { parseTrustProxy } from './client-address.ts';
import { defaultLimits, type Limits } from './limits.ts';
import { parseRoles, type Role } from './roles.ts';

const int = (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback);

const schema = z.object({
  DATABASE_URL: z.url().optional(),
  /**
   * Where connections that need a session go (LISTEN, advisory locks, migrations): a direct or
   * session-mode address of DATABASE_URL's database, when DATABASE_URL goes through a
   * transaction-mode pooler (src/lib/session-url.ts, docs/scale.md). Default: DATABASE_URL.
   */
  DATABASE_SESSION_URL: z.url().optional(),
  /** Named statements through the pooler: on only when it keeps them (PgBouncer 1.21+ max_prepared_statements). */
  DATABASE_PREPARED_STATEMENTS: z
    .enum(['on', 'off'])
    .optional()
    .transform((v) => (v === undefined ? undefined : v === 'on')),
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  HOST: z.string().default('127.0.0.1'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Folder of the embedded PostgreSQL used when DATABASE_URL is not set. */
  DATA_DIR: z.string().default('.data'),
  EMBEDDED_PG_PORT: z.coerce.number().int().default(54329),
  /** How long a verified API key stays cached in one process before it is looked up again. */
  KEY_CACHE_TTL_MS: z.coerce.number().int().min(0).default(5000),
  // Limits and budgets (src/lib/limits.ts, docs/limits.md).
  GRAPHQL_MAX_COST: int(defaultLimits.graphqlMaxCost),
  GRAPHQL_MAX_DEPTH: int(defaultLimits.graphqlMaxDepth),
  GRAPHQL_MAX_ALIASES: int(defaultLimits.graphqlMaxAliases),
  GRAPHQL_MAX_TOKENS: int(defaultLimits.graphqlMaxTokens),
  GRAPHQL_MAX_DIRECTIVES: int(defaultLimits.graphqlMaxDirectives),
  MAX_BODY_BYTES: int(defaultLimits.maxBodyBytes),
  MAX_JSON_DEPTH: int(defaultLimits.maxJsonDepth, 2),
  HEADERS_TIMEOUT_MS: int(defaultLimits.headersTimeoutMs, 100),
  REQUEST_TIMEOUT_MS: int(defaultLimits.requestTimeoutMs, 100),
  MAX_CONNECTIONS: int(defaultLimits.maxConnections, 1),
  WS_CONNECTIONS_PERCENT: int(defaultLimits.wsConnectionsPercent, 1).refine((v) => v <= 100, 'at most 100'),
  WS_MAX_PER_KEY: int(defaultLimits.wsMaxPerKey, 1),
  WS_INSTANCE_TIMEOUT_MS: int(defaultLimits.wsInstanceTimeoutMs, 1000),
  WS_MAX_UNAUTHENTICATED_PER_ADDRESS: int(defaultLimits.wsMaxUnauthenticatedPerAddress, 1),
  WS_MAX_OPERATIONS_PER_SOCKET: int(defaultLimits.wsMaxOperationsPerSocket, 1),
  WS_IDLE_TIMEOUT_MS: int(defaultLimits.wsIdleTimeoutMs, 1000),
  RATE_LIMIT_POINTS: int(defaultLimits.rateLimitPoints),
  RATE_LIMIT_WINDOW_SECONDS: int(defaultLimits.rateLimitWindowSeconds, 1),
  RATE_LIMITED_DELAY_MS: int(defaultLimits.rateLimitedDelayMs),
  AUTH_FAILURES_PER_MINUTE: int(defaultLimits.authFailuresPerMinute),
  ANONYMOUS_BYTES_PER_WINDOW: int(defaultLimits.anonymousBytesPerWindow),
  REQUEST_DEADLINE_MS: int(defaultLimits.requestDeadlineMs, 100),
  RESPONSE_MAX_BYTES: int(defaultLimits.responseMaxBytes, 1024),
  DB_CONNECT_TIMEOUT_MS: int(defaultLimits.dbConnectTimeoutMs, 100),
  MEDIA_MAX_BYTES: int(defaultLimits.mediaMaxBytes, 1),
  MEDIA_DOWNLOAD_TIMEOUT_MS: int(defaultLimits.mediaDownloadTimeoutMs, 100),
  // 0 keeps events; otherwise at least 2 days (a delivery retries for about one) and at most 10 years.
  EVENT_RETENTION_DAYS: int(defaultLimits.eventRetentionDays)
    .refine((v) => v === 0 || v >= 2, 'must be 0 (keep events) or at least 2 days')
    .refine((v) => v <= 3650, 'must be at most 3650 days'),
  WEBHOOK_TIMEOUT_MS: int(defaultLimits.webhookTimeoutMs, 100),
  /**
   * What this process does (src/lib/roles.ts): http, deliveries, sends, sweeps, comma-separated.
   * Default: all four for `npm start`, all but http for `npm run worker`.
   */
  ROLES: z
    .string()
    .optional()
    .superRefine((v, ctx) => {
      if (v === undefined) return;
      try {
        parseRoles(v);
      } catch (e) {
        ctx.addIssue({ code: 'custom', message: (e as Error).message });
      }
    }),
  /** The earlier form of ROLES: `off` drops deliveries from the default roles. */
  WORKERS: z.enum(['on', 'off']).optional(),
  /** Job queue supervision interval in seconds (pg-boss's 60 by default); tests lower it. */
  QUEUE_SUPERVISE_SECONDS: z.coerce.number().int().min(1).max(60).optional(),
  /** Both sweeps' period in seconds (an hour by default); tests lower it. */
  SWEEP_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(86_400).optional(),
  /** The delivery queue's heartbeat contract in seconds (30 by default, at least 10); tests lower it. */
  DELIVERY_HEARTBEAT_SECONDS: z.coerce.number().int().min(10).max(120).optional(),
  /**
   * The one secret the others derive from when they are not set themselves (src/lib/secrets.ts):
   * every process serving one database needs the same secrets (docs/scale.md).
   */
  ROOT_SECRET: z.string().min(32).optional(),
  /** The HMAC key of media links; instances behind one address need the same. Random per process when unset. */
  MEDIA_LINK_SECRET: z.string().min(16).optional(),
  /** The messaging network's callback secret (the sandbox signs with it). Random per process when unset. */
  NETWORK_SECRET: z.string().min(16).optional(),
  /** The sandbox network's receipt delays in ms: sent,delivered,read. */
  SANDBOX_RECEIPT_DELAYS_MS: z
    .string()
    .regex(/^\d+,\d+,\d+$/, 'three numbers: sent,delivered,read')
    .default('500,1500,3000')
    .transform((v) => {
      const [sent, delivered, read] = v.split(',').map(Number);
      return { sent, delivered, read };
    }),
  /** On SIGTERM, how long requests in flight may take to finish. */
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(10_000),
  /** Where clients reach the service: an absolute http(s) URL (doc_url and media links are built on it). */
  PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** The Bearer token GET /metrics takes (docs/metrics.md); unset, /metrics is a 404. */
  METRICS_TOKEN: z.string().min(16, 'at least 16 characters').optional(),
  /**
   * Proxies whose X-Forwarded-For names the client (failed-authentication throttling is per
   * client address): empty (none, the default), a hop count, or addresses and CIDR ranges.
   */
  TRUST_PROXY: z
    .string()
    .default('')
    .superRefine((v, ctx) => {
      try {
        parseTrustProxy(v);
      } catch (e) {
        ctx.addIssue({
          code: 'custom',
          message: `not a hop count or a list of addresses: ${(e as Error).message}`,
        });
      }
    }),
  /** Comma-separated origins browsers may call from; empty: any origin, never with credentials. */
  CORS_ORIGINS: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((o) => o.trim())
        .filter(Boolean),
    ),
});

export type Config = z.infer<typeof schema>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  if (parsed.data.ROLES !== undefined && parsed.data.WORKERS !== undefined)
    throw new Error(
      'Invalid configuration:\n  WORKERS: set ROLES alone (WORKERS=off is ROLES without deliveries)',
    );
  if (parsed.data.DATABASE_SESSION_URL && !parsed.data.DATABASE_URL)
    throw new Error(
      'Invalid configuration:\n  DATABASE_SESSION_URL: set it with DATABASE_URL (the embedded PostgreSQL needs neither)',
    );
  return parsed.data;
}

/** This process's roles: ROLES, else `defaults` (less deliveries under WORKERS=off). */
export function rolesOf(c: Config, defaults: readonly Role[]): Role[] {
  if (c.ROLES !== undefined) return parseRoles(c.ROLES);
  return defaults.filter((r) => !(r === 'deliveries' && c.WORKERS === 'off'));
}

/** The connection settings `openOrm` takes (src/lib/session-url.ts). */
export function connectionOf(c: Config): { sessionUrl?: string; preparedStatements?: boolean } {
  return {
    ...(c.DATABASE_SESSION_URL ? { sessionUrl: c.DATABASE_SESSION_URL } : {}),
    ...(c.DATABASE_PREPARED_STATEMENTS !== undefined
      ? { preparedStatements: c.DATABASE_PREPARED_STATEMENTS }
      : {}),
  };
}

/** The limits the configuration sets. */
export function limitsOf(c: Config): Limits {
  return {
    graphqlMaxCost: c.GRAPHQL_MAX_COST,
    graphqlMaxDepth: c.GRAPHQL_MAX_DEPTH,
    graphqlMaxAliases: c.GRAPHQL_MAX_ALIASES,
    graphqlMaxTokens: c.GRAPHQL_MAX_TOKENS,
    graphqlMaxDirectives: c.GRAPHQL_MAX_DIRECTIVES,
    maxBodyBytes: c.MAX_BODY_BYTES,
    maxJsonDepth: c.MAX_JSON_DEPTH,
    headersTimeoutMs: c.HEADERS_TIMEOUT_MS,
    requestTimeoutMs: c.REQUEST_TIMEOUT_MS,
    maxConnections: c.MAX_CONNECTIONS,
    wsConnectionsPercent: c.WS_CONNECTIONS_PERCENT,
    wsMaxPerKey: c.WS_MAX_PER_KEY,
    wsInstanceTimeoutMs: c.WS_INSTANCE_TIMEOUT_MS,
    wsMaxUnauthenticatedPerAddress: c.WS_MAX_UNAUTHENTICATED_PER_ADDRESS,
    wsMaxOperationsPerSocket: c.WS_MAX_OPERATIONS_PER_SOCKET,
    wsIdleTimeoutMs: c.WS_IDLE_TIMEOUT_MS,
    rateLimitPoints: c.RATE_LIMIT_POINTS,
    rateLimitWindowSeconds: c.RATE_LIMIT_WINDOW_SECONDS,
    rateLimitedDelayMs: c.RATE_LIMITED_DELAY_MS,
    authFailuresPerMinute: c.AUTH_FAILURES_PER_MINUTE,
    anonymousBytesPerWindow: c.ANONYMOUS_BYTES_PER_WINDOW,
    requestDeadlineMs: c.REQUEST_DEADLINE_MS,
    responseMaxBytes: c.RESPONSE_MAX_BYTES,
    dbConnectTimeoutMs: c.DB_CONNECT_TIMEOUT_MS,
    mediaMaxBytes: c.MEDIA_MAX_BYTES,
    mediaDownloadTimeoutMs: c.MEDIA_DOWNLOAD_TIMEOUT_MS,
    eventRetentionDays: c.EVENT_RETENTION_DAYS,
    webhookTimeoutMs: c.WEBHOOK_TIMEOUT_MS,
  };
}
