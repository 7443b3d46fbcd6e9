import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { getOperationAST } from 'graphql';
import { CloseCode } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import type pg from 'pg';
import { type WebSocket, WebSocketServer } from 'ws';
import { narrowingRefusal } from '../auth/access.ts';
import { authenticate, keyChangeCount, keyHashOf, onKeyChange } from '../auth/keys.ts';
import { clientAddressOf, type TrustProxy } from '../lib/client-address.ts';
import { AppError } from '../lib/errors.ts';
import { kindOfId } from '../lib/ids.ts';
import type { Limits } from '../lib/limits.ts';
import { logger } from '../lib/logger.ts';
import { countSockets, websocketOperations } from '../lib/metrics.ts';
import { type Principal, type RequestInfo, runRequest } from '../lib/request-context.ts';
import { closeReason } from './close-reason.ts';
import { toGraphQLError } from './graphql-errors.ts';
import type { OperationRunner, PreparedRun } from './runner.ts';
import { WebsocketHolds } from './websocket-holds.ts';
import { SocketGate, TOO_MANY_CLOSE } from './websocket-limits.ts';

/**
 * graphql-ws at /graphql (docs/events.md, Subscriptions). The key comes in `connection_init`'s
 * payload, `{"Authorization": "Bearer <key>"}` as the HTTP header is spelled, or `{"apiKey":
 * "<key>"}`; a missing, invalid or revoked key closes the socket with 4403 Forbidden (graphql-ws's
 * code for a refused connection), its reason REST's code and message (`unauthenticated: Invalid
 * or revoked API key.`, close-reason.ts). Every operation then goes through the one runner
 * (src/server/runner.ts): the key is authenticated again, the same limits and the same cost
 * spent from its budget as over HTTP. A key revoked, or losing a scope it had when the socket
 * opened, closes its sockets at once with 4403 (any process's change is heard: key-changes.ts).
 *
 * What one integrator may hold is capped (src/server/websocket-limits.ts, docs/limits.md): sockets
 * per key, unacknowledged sockets per address, operations per socket, idle time, and the share of
 * the server's connections websockets may take at all. Sockets per key are counted across every
 * instance on the database (src/server/websocket-holds.ts); this process's own count refuses at
 * once, without a round trip, when it alone holds the key's cap.
 */

interface Connection {
  credential: string;
  hash: string | null;
  principal: Principal;
  socket: WebSocket;
}

/** The close code of a key revoked or narrowed while its socket was open. */
export const KEY_REVOKED_CLOSE = CloseCode.Forbidden;

export interface Subscriptions {
  /** Open sockets (tests, the fan-out benchmark). */
  readonly size: number;
  /** Closes every socket (1001 going away) and stops accepting new ones. */
  close(): Promise<void>;
}

/** The credential a connection_init payload carries, as an Authorization value. */
function credentialOf(params: Record<string, unknown> | undefined): string | null {
  if (!params || typeof params !== 'object') return null;
  const header = params.Authorization ?? params.authorization;
  if (typeof header === 'string') return header;
  if (typeof params.apiKey === 'string') return `Bearer ${params.apiKey}`;
  return null;
}

const tooManyOperations = (max: number) =>
  toGraphQLError(
    new AppError(
      'rate_limited',
      `This socket already runs ${max} operations, the most one socket may: complete one first.`,
      { details: { limit: 'operations_per_socket', max } },
    ),
  );

/** An operation under way on a socket, from its subscribe message to its end. */
interface RunningOperation {
  info: RequestInfo;
  name: string | null;
  started: number;
  subscription: boolean;
  outcome: 'ok' | 'error';
}

/**
 * One line per websocket operation, as HTTP writes one per request (src/server/app.ts): its
 * request id (the scope's logger), key, operation type and name, duration (a subscription's
 * whole life), outcome; and its count by type and outcome (src/lib/metrics.ts).
 */
function operationEnded(info: RequestInfo, name: string | null, started: number, outcome: string) {
  const operation = info.operationType ?? 'unknown';
  websocketOperations.inc({ operation, outcome });
  info.log.info(
    {
      key_id: info.keyId,
      transport: 'websocket',
      operation_type: operation,
      operation_name: name?.slice(0, 100) ?? null,
      outcome,
      duration_ms: Math.round((performance.now() - started) * 10) / 10,
    },
    'websocket operation',
  );
}

export function serveSubscriptions(
  server: Server,
  opts: { runner: OperationRunner; limits: Limits; trustProxy: TrustProxy },
): Subscriptions {
  const { runner } = opts;
  const { deps } = runner;
  // Upgrades are handled here, not by ws itself, so a socket over a cap never reaches graphql-ws.
  const wss = new WebSocketServer({ noServer: true, path: '/graphql', maxPayload: opts.limits.maxBodyBytes });
  const gate = new SocketGate({
    perKey: opts.limits.wsMaxPerKey,
    unauthenticatedPerAddress: opts.limits.wsMaxUnauthenticatedPerAddress,
    operationsPerSocket: opts.limits.wsMaxOperationsPerSocket,
    idleMs: opts.limits.wsIdleTimeoutMs,
    total: Math.max(1, Math.floor((opts.limits.maxConnections * opts.limits.wsConnectionsPercent) / 100)),
  });
  // The key's sockets on every instance (the ORM's pool: one statement per admission and release).
  let pool: Promise<pg.Pool> | null = null;
  const holds = new WebsocketHolds({
    pool: () => {
      pool ??= deps.em.getConnection().getNativeClient() as Promise<pg.Pool>;
      return pool;
    },
    cap: opts.limits.wsMaxPerKey,
    instanceTimeoutMs: opts.limits.wsInstanceTimeoutMs,
  });
  /** Closes a socket over a cap; one that does not answer the close frame is cut a second later. */
  const refuse = (socket: WebSocket, close: { code: number; reason: string }) => {
    socket.close(close.code, close.reason);
    const cut = setTimeout(() => socket.terminate(), 1000);
    cut.unref();
    socket.once('close', () => clearTimeout(cut));
  };
  const onUpgrade = (request: IncomingMessage, stream: Duplex, head: Buffer) => {
    wss.handleUpgrade(request, stream, head, (socket) => {
      const refusal = gate.admit(socket, clientAddressOf(request, opts.trustProxy), wss.clients.size);
      if (refusal) refuse(socket, refusal);
      else wss.emit('connection', socket, request);
    });
  };
  server.on('upgrade', onUpgrade);
  const connections = new Map<WebSocket, Connection>();
  const prepared = new WeakMap<object, PreparedRun>();
  // Each socket's operations under way, by graphql-ws's operation id.
  const running = new WeakMap<WebSocket, Map<string, RunningOperation>>();
  const stopCounting = countSockets(() => {
    let subscriptions = 0;
    for (const socket of wss.clients)
      for (const op of running.get(socket)?.values() ?? []) if (op.subscription) subscriptions++;
    return { sockets: wss.clients.size, subscriptions };
  });

  /** Checks the key of each socket that uses it (every socket when `hash` is unknown) again. */
  async function recheck(hash?: string) {
    // One lookup per key, however many sockets share it.
    const byKey = new Map<string, Connection[]>();
    for (const c of connections.values()) {
      if (hash && c.hash !== hash) continue;
      const list = byKey.get(c.credential) ?? [];
      list.push(c);
      byKey.set(c.credential, list);
    }
    for (const [credential, list] of byKey) {
      let now: Principal | null = null;
      let refusal: AppError | undefined;
      try {
        now = await authenticate(deps.em, credential, deps.keyCacheTtlMs);
      } catch (e) {
        if (!(e instanceof AppError)) {
          logger.warn({ err: e }, 'could not check a websocket key again; kept open');
          continue;
        }
        refusal = e;
      }
      for (const c of list) {
        // What REST would answer this key now: its 401, or the 403 naming the scopes it lost.
        const reason = refusal ?? (now && narrowingRefusal(c.principal, now));
        if (!reason) continue;
        connections.delete(c.socket);
        c.socket.close(KEY_REVOKED_CLOSE, closeReason(reason));
      }
    }
  }
  const stopListening = onKeyChange((hash) => {
    recheck(hash).catch((err) => logger.warn({ err }, 'websocket key check failed'));
  });

  const disposable = useServer<Record<string, unknown>, { connection?: Connection }>(
    {
      onConnect: async (ctx) => {
        const credential = credentialOf(ctx.connectionParams);
        const info = runner.begin({ clientAddress: clientAddressOf(ctx.extra.request, opts.trustProxy) });
        const changesBefore = keyChangeCount();
        try {
          const { principal } = await runner.authenticate(info, credential, false);
          const connection = {
            credential: credential as string,
            hash: keyHashOf(credential),
            principal,
            socket: ctx.extra.socket,
          };
          // This process alone holds the key's cap: refused at once.
          if (!gate.acknowledge(ctx.extra.socket, principal.keyId, ctx.subscriptions)) {
            refuse(ctx.extra.socket, TOO_MANY_CLOSE);
            // graphql-ws's own close (4403) comes second and is ignored by a closing socket.
            return false;
          }
          // Then every instance's count. A socket that closes meanwhile gives its place back once taken.
          const apiKeyId = kindOfId(principal.keyId)?.n as number;
          const admission = holds.admit(principal.clinicId, apiKeyId);
          ctx.extra.socket.once('close', () => {
            admission
              .then((taken) => (taken ? holds.release(principal.clinicId, apiKeyId) : undefined))
              .catch((err) => logger.warn({ err }, 'websocket release failed'));
          });
          if (!(await admission)) {
            refuse(ctx.extra.socket, TOO_MANY_CLOSE);
            return false;
          }
          ctx.extra.connection = connection;
          connections.set(ctx.extra.socket, connection);
          // A key change heard while the key was read may have come after the read began (its
          // check of open sockets did not see this one yet): checked again now it is known.
          if (keyChangeCount() !== changesBefore)
            recheck(connection.hash ?? undefined).catch((err) =>
              logger.warn({ err }, 'websocket key check failed'),
            );
          return true;
        } catch (e) {
          if (!(e instanceof AppError)) throw e;
          // 4403 Forbidden, graphql-ws's code for a refused connection, for unauthenticated and
          // rate_limited alike; the reason says which, in REST's words. graphql-ws's own close
          // ('Forbidden') comes second and is ignored by a closing socket.
          refuse(ctx.extra.socket, { code: CloseCode.Forbidden, reason: closeReason(e) });
          return false;
        }
      },
      onClose: (ctx) => {
        connections.delete(ctx.extra.socket);
      },
      onSubscribe: async (ctx, id, payload) => {
        const started = performance.now();
        const connection = ctx.extra.connection as Connection;
        const name = payload.operationName ?? null;
        // Each operation is a request of its own: authenticated again (a revoked key is refused),
        // its cost spent from the key's budget, its deadline until its first result.
        const info = runner.begin({
          clientAddress: clientAddressOf(ctx.extra.request, opts.trustProxy),
          maxResponseBytes: opts.limits.responseMaxBytes,
          streaming: true,
        });
        // The socket stays open: only this operation is refused.
        if (!gate.startOperation(ctx.extra.socket)) {
          operationEnded(info, name, started, 'refused');
          return [tooManyOperations(opts.limits.wsMaxOperationsPerSocket)];
        }
        // In the operation's scope: a refusal carries its request id, as over HTTP.
        const result = await runRequest(info, async () => {
          try {
            const context = await runner.authenticate(info, connection.credential, false);
            return await runner.prepare(
              context,
              {
                query: payload.query,
                variables: payload.variables ?? undefined,
                operationName: payload.operationName ?? undefined,
              },
              opts.limits.requestDeadlineMs,
            );
          } catch (e) {
            return [toGraphQLError(e)];
          }
        });
        if (!('run' in result)) {
          operationEnded(info, name, started, 'refused');
          return result;
        }
        // graphql-ws hands these arguments back to execute or subscribe: the run is found by them.
        const run = result;
        prepared.set(run.args, run);
        const ops = running.get(ctx.extra.socket) ?? new Map<string, RunningOperation>();
        running.set(ctx.extra.socket, ops);
        // The name the document gives the operation it runs, when the message named none.
        const named = name ?? getOperationAST(run.args.document, run.args.operationName)?.name?.value ?? null;
        ops.set(id, { info, name: named, started, subscription: run.subscription, outcome: 'ok' });
        return run.args;
      },
      onNext: (ctx, id, _payload, _args, result) => {
        const op = running.get(ctx.extra.socket)?.get(id);
        if (op && (result as { errors?: unknown[] }).errors?.length) op.outcome = 'error';
      },
      onError: (ctx, id) => {
        const op = running.get(ctx.extra.socket)?.get(id);
        if (op) op.outcome = 'error';
      },
      // After its result (a query, a mutation) or its end (a subscription completed by the client,
      // by its source, or by the socket closing).
      onComplete: (ctx, id) => {
        const ops = running.get(ctx.extra.socket);
        const op = ops?.get(id);
        if (!op) return;
        ops?.delete(id);
        operationEnded(op.info, op.name, op.started, op.outcome);
      },
      execute: (args) => (prepared.get(args) as PreparedRun).run() as any,
      subscribe: (args) => (prepared.get(args) as PreparedRun).run() as any,
    },
    wss,
  );

  return {
    get size() {
      return connections.size;
    },
    async close() {
      // From now on a socket's close writes nothing: one statement deletes this instance's rows.
      const holdsClosed = holds.close();
      stopListening();
      stopCounting();
      gate.stop();
      server.off('upgrade', onUpgrade);
      for (const socket of wss.clients) socket.close(1001, 'Server shutting down');
      await disposable.dispose();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await holdsClosed;
    },
  };
}
