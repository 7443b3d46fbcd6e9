import { pino } from 'pino';

/**
 * JSON lines on stdout. Written asynchronously: a synchronous write per request line showed in
 * profiles; lines that pile up while one write is under way go out together, and pino flushes
 * what is left when the process exits.
 */
export const logger = pino(
  {
    level: process.env.LOG_LEVEL ?? (process.env.VITEST ? 'silent' : 'info'),
    base: { service: 'clinic-gateway' },
  },
  pino.destination({ dest: 1, sync: false }),
);
