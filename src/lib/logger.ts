import { pino } from 'pino';
import { redactLogLine } from './card-numbers.ts';

/**
 * JSON lines on stdout. Written asynchronously: a synchronous write per request line showed in
 * profiles; lines that pile up while one write is under way go out together, and pino flushes
 * what is left when the process exits.
 *
 * Every line, of this logger and of its children, passes through `redactLogLine` as it is
 * written (pino's streamWrite hook): no card number or named security code reaches a log, wherever
 * it came from (a URL path, an error message, a value a future call site logs) and without any
 * call site having to remember it (src/lib/card-numbers.ts).
 */
export const logger = pino(
  {
    level: process.env.LOG_LEVEL ?? (process.env.VITEST ? 'silent' : 'info'),
    base: { service: 'clinic-gateway' },
    hooks: { streamWrite: redactLogLine },
  },
  pino.destination({ dest: 1, sync: false }),
);
