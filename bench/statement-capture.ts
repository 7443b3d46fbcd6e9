/**
 * The app's own SQL, as its `pg` client sends it: bench/server.ts installs this hook when started
 * with BENCH_CAPTURE=1 (a capture process of its own, never the process being timed), and
 * bench/patients.ts records one request per case through it. The raw server then runs exactly
 * these statements (bench/raw-server.ts), and the harness compares what the raw server ran for
 * the same request with them, text, name and values.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Server } from 'node:http';
import pg from 'pg';

/** One statement as it reached `pg.Client#query`. */
export interface CapturedStatement {
  /** The prepared statement's name, or null for an unnamed one (parsed and planned every time). */
  name: string | null;
  text: string;
  /** The parameters, JSON-safe: a Date as its ISO string. */
  values: unknown[];
  /** 'array' when rows come back as arrays. */
  rowMode: string | null;
}

export const jsonSafe = (v: unknown): unknown =>
  v instanceof Date ? v.toISOString() : Array.isArray(v) ? v.map(jsonSafe) : v;

/** What a `pg.Client#query` call sends, in any of its forms (text and values, config, Query). */
export function describeQuery(config: any, values?: unknown): CapturedStatement {
  const c = typeof config === 'string' ? { text: config } : (config ?? {});
  const vals = Array.isArray(values) ? values : Array.isArray(c.values) ? c.values : [];
  return {
    name: c.name ?? null,
    text: String(c.text),
    values: vals.map(jsonSafe),
    rowMode: c.rowMode ?? c._rowMode ?? null,
  };
}

let recording: CapturedStatement[] | null = null;
/** Set inside an HTTP request's handling: the app's background work (job polling) is not recorded. */
const inRequest = new AsyncLocalStorage<true>();

export function installCapture(): void {
  const emit = Server.prototype.emit as (...args: any[]) => boolean;
  Server.prototype.emit = function scoped(this: Server, event: string, ...args: any[]) {
    return event === 'request'
      ? inRequest.run(true, () => emit.call(this, event, ...args))
      : emit.call(this, event, ...args);
  } as typeof Server.prototype.emit;
  const query = pg.Client.prototype.query as (...args: any[]) => any;
  pg.Client.prototype.query = function capturing(this: pg.Client, ...args: any[]) {
    if (recording && inRequest.getStore()) recording.push(describeQuery(args[0], args[1]));
    return query.apply(this, args);
  } as typeof pg.Client.prototype.query;
}

export function startRecording(): void {
  recording = [];
}

export function stopRecording(): CapturedStatement[] {
  const out = recording ?? [];
  recording = null;
  return out;
}
