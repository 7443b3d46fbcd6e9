import { runDashboard } from './dashboard.ts';

/**
 * The dashboard example against a running service (`npm start` prints demo keys; its "clinic
 * writes" key has every scope this needs). With the SDK built (`npm run build -w
 * @clinic-gateway/sdk`) and the example compiled, it runs on any Node from 20 on:
 *
 *   npx tsc -p examples/dashboard-client && API_KEY=cg_… node examples/dashboard-client/dist/main.js
 *
 * Node 24 also runs the source as it is (`node examples/dashboard-client/src/main.ts`). BASE_URL
 * defaults to the local service's http://127.0.0.1:4000; FROM (ISO 8601) is where the search for
 * a free slot starts, now by default.
 */
const apiKey = process.env.API_KEY;
if (!apiKey) {
  console.error(
    'Set API_KEY to a key with patients:read, appointments:read, appointments:write, catalog:read and webhooks:manage.',
  );
  process.exit(2);
}
// Node 20 has no WebSocket of its own: `ws` stands in (Node 22 and later have one).
const webSocketImpl = globalThis.WebSocket ?? (await import('ws')).default;
try {
  await runDashboard(
    { baseUrl: process.env.BASE_URL ?? 'http://127.0.0.1:4000', apiKey, webSocketImpl },
    process.env.FROM ? { from: new Date(process.env.FROM) } : {},
  );
} catch (err) {
  const cause = err instanceof Error && err.cause instanceof Error ? ` (${err.cause.message})` : '';
  console.error(`${err instanceof Error ? err.message : String(err)}${cause}`);
  process.exitCode = 1;
}
