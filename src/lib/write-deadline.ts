import pg from 'pg';
import { currentRequest, type OpenTransaction, type RequestInfo } from './request-context.ts';

/**
 * A request's deadline and its writes (docs/limits.md, "A 504 on a write"): a 504 means nothing
 * was written. Every statement of the pool passes here (NamingClient, src/lib/statement-names.ts),
 * in the async scope of the request that sends it, so a request's transactions are known by
 * their BEGIN, COMMIT and ROLLBACK whatever opened them (the unit of work, a hand-made
 * `em.transactional`). At the deadline (`stopWrites`, from src/server/runner.ts):
 * - a transaction whose COMMIT is not yet sent can no longer send it: every statement of it but
 *   ROLLBACK is refused from then on, so its rollback is certain at once and the 504 is answered
 *   at once; its running statement (a lock wait, say) is cancelled so the connection and its locks
 *   are let go now, not at the statement timeout;
 * - a transaction whose COMMIT is already sent is waited for: committed, the request answers
 *   what it did (its 2xx), not a 504;
 * - no transaction of the request starts afterwards.
 * Statements outside a transaction (the Idempotency-Key's claim and release, rate-limit points)
 * run as before: they are how a stopped write frees its key for the retry.
 */

/** How long a cancel may take to reach the database before the connection is dropped instead. */
const CANCEL_WAIT_MS = 2000;

type Send = () => unknown;

/** Runs one statement of `client` (`send`), or refuses it when its request's writes are stopped. */
export function guardStatement(client: pg.Client, text: unknown, send: Send, callback?: unknown): unknown {
  const req = currentRequest();
  if (req === undefined || typeof text !== 'string') return send();
  const tx = req.transactions?.get(client);
  if (tx === undefined) {
    if (text !== 'begin' && !text.startsWith('start transaction')) return send();
    if (req.writesStopped) return refuse(req.writesStopped, callback);
    return opened(req, client, send);
  }
  if (text === 'rollback') {
    // Sent only once the cancel reached the database: it cannot then land on a later statement of
    // this connection (someone else's, once the pool lends it again).
    req.transactions?.delete(client);
    if (!tx.cancelled) return send();
    const later = tx.cancelled.then(send);
    return typeof callback === 'function' ? undefined : later;
  }
  if (req.writesStopped && !tx.committing && !text.startsWith('rollback to'))
    return refuse(req.writesStopped, callback);
  if (text === 'commit') return committed(req, client, tx, send);
  return send();
}

function opened(req: RequestInfo, client: pg.Client, send: Send): unknown {
  const tx: OpenTransaction = {};
  req.transactions ??= new Map();
  req.transactions.set(client, tx);
  const sent = send();
  // A BEGIN that failed opened nothing (no ROLLBACK follows it).
  if (sent instanceof Promise)
    sent.then(undefined, () => {
      if (req.transactions?.get(client) === tx) req.transactions.delete(client);
    });
  return sent;
}

function committed(req: RequestInfo, client: pg.Client, tx: OpenTransaction, send: Send): unknown {
  const sent = send();
  if (!(sent instanceof Promise)) return sent;
  tx.committing = sent.then(
    () => {
      req.commits = (req.commits ?? 0) + 1;
      return true;
    },
    () => false,
  );
  void tx.committing.then(() => {
    if (req.transactions?.get(client) === tx) req.transactions.delete(client);
  });
  return sent;
}

function refuse(err: Error, callback: unknown): unknown {
  if (typeof callback === 'function') {
    queueMicrotask(() => callback(err));
    return undefined;
  }
  return Promise.reject(err);
}

/**
 * The deadline of `req` has passed: stops its writes. Answers the commits under way (resolved once
 * they end), or undefined when none is: the request can then commit nothing more.
 */
export function stopWrites(req: RequestInfo, err: Error): Promise<unknown> | undefined {
  req.writesStopped ??= err;
  const committing: Promise<boolean>[] = [];
  for (const [client, tx] of req.transactions ?? []) {
    if (tx.committing) committing.push(tx.committing);
    else tx.cancelled ??= cancelRunning(client as pg.Client);
  }
  return committing.length ? Promise.all(committing) : undefined;
}

interface CancelConnection {
  on(event: 'connect' | 'end' | 'error', listener: () => void): void;
  connect(port: number | string, host?: string): void;
  cancel(processID: number, secretKey: number): void;
}

interface Internals {
  _getActiveQuery(): object | null | undefined;
  processID: number | null;
  secretKey: number | null;
  host: string;
  port: number;
  connection: { stream: { destroy(): void } };
}

/**
 * Cancels the statement `client` is running, as psql's Ctrl-C does: PostgreSQL's cancel request
 * on a connection of its own (no pool connection needed, none free when the pool is exhausted).
 * Resolves once the database has taken it (it closes that connection); a cancel not taken within
 * CANCEL_WAIT_MS drops `client`'s connection instead, which the pool then discards.
 */
function cancelRunning(client: pg.Client): Promise<void> {
  const c = client as unknown as Internals;
  if (!c._getActiveQuery() || !c.processID) return Promise.resolve();
  return new Promise((resolve) => {
    // pg's own cancel (Client#cancel) reads the deprecated `activeQuery`: its steps, without it.
    const con = new pg.Connection() as unknown as CancelConnection;
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      c.connection.stream.destroy();
      done();
    }, CANCEL_WAIT_MS);
    con.on('error', done);
    con.on('end', done);
    con.on('connect', () => con.cancel(c.processID as number, c.secretKey as number));
    if (c.host?.startsWith('/')) con.connect(`${c.host}/.s.PGSQL.${c.port}`);
    else con.connect(c.port, c.host);
  });
}
