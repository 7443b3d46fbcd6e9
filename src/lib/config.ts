import { z } from 'zod';

const schema = z.object({
  DATABASE_URL: z.url().optional(),
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  HOST: z.string().default('127.0.0.1'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Folder of the embedded PostgreSQL used when DATABASE_URL is not set. */
  DATA_DIR: z.string().default('.data'),
  EMBEDDED_PG_PORT: z.coerce.number().int().default(54329),
  /** How long a verified API key stays cached in one process before it is looked up again. */
  KEY_CACHE_TTL_MS: z.coerce.number().int().min(0).default(5000),
  /** Requests per second per API key (REST and GraphQL together); 0 turns limiting off. */
  RATE_LIMIT_PER_SECOND: z.coerce.number().int().min(0).default(100),
  /** On SIGTERM, how long requests in flight may take to finish. */
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(10_000),
  PUBLIC_URL: z.string().optional(),
});

export type Config = z.infer<typeof schema>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}
