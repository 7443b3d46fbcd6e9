import type { EntityManager } from '@mikro-orm/postgresql';
import { CompiledQuery } from 'kysely';
import type pg from 'pg';
import { cached } from '../lib/memo.ts';
import { nameStatement } from '../lib/statement-names.ts';

/**
 * Runs a statement as a named prepared statement on MikroORM's own `pg` pool, so that
 * PostgreSQL parses it once per connection and, once its plans prove alike, stops planning it
 * at all. On the benchmark's pages planning cost PostgreSQL more than executing (0.5 ms against
 * 0.3 ms for the appointments of a page of patients). Inside a transaction it runs on the
 * transaction's connection, named as well (NamingClient below): a write's statements are planned
 * once per connection too.
 *
 * A statement with LIKE stays unnamed, planned for each pattern: a plan made once for any
 * pattern cannot use the prefix indexes, and a rare name would scan the clinic's patients.
 */
export async function runNamed(
  em: EntityManager,
  statement: NamedStatement,
  params: unknown[],
  /**
   * A connection of the caller's own instead of the pool (the event relay's): named on it as
   * well, and not logged, since it runs no request's statements.
   */
  on?: pg.ClientBase,
): Promise<NamedResult> {
  const trx = em.getTransactionContext();
  const started = Date.now();
  const values = params.map(toPg);
  if (on) {
    const res = await on.query<unknown[]>({
      ...(statement.name ? { name: statement.name } : {}),
      text: statement.text,
      values,
      rowMode: 'array',
    });
    return { rows: res.rows, columns: res.fields.map((f) => f.name) };
  }
  if (trx) {
    // Real parameters through the transaction (MikroORM's `execute` would inline them, making
    // every call a new text to parse and plan); its connection's client names the statement.
    const res = await trx.executeQuery(CompiledQuery.raw(statement.text, values));
    logStatement(em, statement, started, res.rows.length);
    return { rows: res.rows as Record<string, unknown>[], columns: null };
  }
  const pool = pools.get(em.getConnection()) ?? (await poolOf(em));
  // Rows as arrays: the driver then builds no object per row (a copy of a prebuilt object with
  // every column), which the lean row would replace anyway (src/db/lean.ts maps by position).
  const res = await pool.query<unknown[]>({
    ...(statement.name ? { name: statement.name } : {}),
    text: statement.text,
    values,
    rowMode: 'array',
  });
  logStatement(em, statement, started, res.rows.length);
  return { rows: res.rows, columns: res.fields.map((f) => f.name) };
}

/** Only when queries are logged (tests count them): the call itself showed on busy pages. */
function logStatement(em: EntityManager, statement: NamedStatement, started: number, results: number) {
  const log = em.config.getLogger();
  if (log.isEnabled('query'))
    log.logQuery({ query: statement.sql, took: Date.now() - started, results, level: 'info' });
}

/** Rows as arrays in the order of `columns` (the pool), or as objects by column name (a transaction). */
export type NamedResult =
  | { rows: unknown[][]; columns: string[] }
  | { rows: Record<string, unknown>[]; columns: null };

export interface NamedStatement {
  /** Absent: run unnamed (see runNamed). */
  name?: string;
  /** MikroORM's form, with `?` placeholders (for logs and the unnamed path). */
  sql: string;
  /** PostgreSQL's form, with `$1`, `$2`, … */
  text: string;
}

let counter = 0;

/** A statement of its own name: a name is never reused for other SQL. */
export function namedStatement(sql: string): NamedStatement {
  const text = numberPlaceholders(sql);
  if (/\blike\b/i.test(sql)) return { sql, text };
  counter += 1;
  const name = `cg_lean_${counter}`;
  nameStatement(text, name);
  return { name, sql, text };
}

/** The statement of a write's fixed SQL (`?` placeholders), made once per text. */
const bySql = new Map<string, NamedStatement>();
export const statementOf = (sql: string): NamedStatement => cached(bySql, sql, () => namedStatement(sql));

/** `?` → `$n`, outside quoted strings and identifiers. */
export function numberPlaceholders(sql: string): string {
  let out = '';
  let n = 0;
  let quote: string | null = null;
  for (const ch of sql) {
    if (quote) {
      if (ch === quote) quote = null;
      out += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      out += ch;
    } else if (ch === '?') {
      n += 1;
      out += `$${n}`;
    } else out += ch;
  }
  return out;
}

// Dates as ISO strings: exact for timestamptz whatever the process's time zone.
const toPg = (v: unknown) => (v instanceof Date ? v.toISOString() : v);

const pools = new WeakMap<object, pg.Pool>();

async function poolOf(em: EntityManager): Promise<pg.Pool> {
  const conn = em.getConnection();
  let pool = pools.get(conn);
  if (!pool) {
    pool = (await conn.getNativeClient()) as pg.Pool;
    pools.set(conn, pool);
  }
  return pool;
}
