import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The process's metrics (docs/metrics.md), counted where each cause happens: the one request path
 * (src/server/app.ts), the rate limiter, the delivery attempt, the chat send worker, the
 * websocket server. This module names none of them: they import it, never the other way round.
 * What is read at scrape time from the database (pool, outbox lag, queue depth) belongs to the
 * server (src/server/metrics-route.ts), which answers this registry's text and its own.
 *
 * Every label has a bounded set of values: a route is the route table's pattern, an operation
 * is GraphQL's operation type, an outcome is one of a few words. Nothing a client chooses
 * (a raw path, an operation name, a key id) becomes a label.
 */
export const registry = new Registry();

// The process's CPU, memory, event-loop delay and GC, as every Node service shows them.
collectDefaultMetrics({ register: registry });

/**
 * Every HTTP request's duration, by route pattern, GraphQL operation type (empty for others),
 * method (one some route answers, else `other`: src/server/metrics-route.ts) and status. Its
 * `_count` series is the request counter.
 */
export const httpRequestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP requests by route pattern, GraphQL operation type, method and status, with their durations.',
  labelNames: ['route', 'operation', 'method', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

/** Operations run over graphql-ws, by operation type and outcome (ok, error, refused). */
export const websocketOperations = new Counter({
  name: 'graphql_ws_operations_total',
  help: 'Operations over the GraphQL websocket by operation type and outcome (ok, error, refused).',
  labelNames: ['operation', 'outcome'] as const,
  registers: [registry],
});

/** Cost points charged to rate-limit budgets before operations run (src/schema/cost.ts), by face. */
export const costSpent = new Counter({
  name: 'graphql_cost_points_total',
  help: 'Cost points charged before operations run, by face (graphql: documents over HTTP and websocket; rest: routes).',
  labelNames: ['face'] as const,
  registers: [registry],
});

/** Requests refused by a rate limit (429), by which limit. */
export const rateLimitRefusals = new Counter({
  name: 'rate_limit_refusals_total',
  help: "Requests refused with 429, by limit (key: an API key's point budget; address: failed authentications from one address; anonymous: an address's bytes of introspection without a key).",
  labelNames: ['limit'] as const,
  registers: [registry],
});

/** Webhook delivery attempts by outcome (succeeded, failed, skipped, lapsed, error). */
export const deliveryAttempts = new Counter({
  name: 'webhook_delivery_attempts_total',
  help: 'Webhook delivery attempts by outcome (succeeded, failed, skipped, lapsed: another worker holds the job, error: not recorded).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

/** Chat send attempts by outcome (sent, refused, error, waiting, skipped, failed). */
export const chatSends = new Counter({
  name: 'chat_sends_total',
  help: 'Chat send attempts by outcome (sent, refused by the network, error: tried again, waiting for an earlier message, skipped: sent or failed already, failed: out of attempts).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

/** What a websocket server counts of its own, read at scrape time. */
export interface SocketCounts {
  sockets: number;
  subscriptions: number;
}

const socketSources = new Set<() => SocketCounts>();
const sumOf = (key: keyof SocketCounts) => {
  let n = 0;
  for (const source of socketSources) n += source()[key];
  return n;
};

new Gauge({
  name: 'websocket_connections',
  help: 'Open GraphQL websockets (acknowledged or not).',
  registers: [registry],
  collect() {
    this.set(sumOf('sockets'));
  },
});

new Gauge({
  name: 'graphql_subscriptions',
  help: 'GraphQL subscriptions running over websockets.',
  registers: [registry],
  collect() {
    this.set(sumOf('subscriptions'));
  },
});

/**
 * Counts a websocket server's sockets and subscriptions at each scrape (nothing per operation);
 * answers the way to stop counting it (its close).
 */
export function countSockets(source: () => SocketCounts): () => void {
  socketSources.add(source);
  return () => socketSources.delete(source);
}
