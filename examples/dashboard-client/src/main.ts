import { runDashboard } from './dashboard.ts';

/**
 * The dashboard example against a running service (`npm start` prints demo keys; its "clinic
 * writes" key has every scope this needs):
 *
 *   API_KEY=cg_… node examples/dashboard-client/src/main.ts
 *
 * GRAPHQL_URL defaults to the local service's http://127.0.0.1:4000/graphql.
 */
const apiKey = process.env.API_KEY;
if (!apiKey) {
  console.error(
    'Set API_KEY to a key with patients:read, appointments:read, appointments:write, catalog:read and webhooks:manage.',
  );
  process.exit(2);
}
try {
  await runDashboard({ url: process.env.GRAPHQL_URL ?? 'http://127.0.0.1:4000/graphql', apiKey });
} catch (err) {
  const cause = err instanceof Error && err.cause instanceof Error ? ` (${err.cause.message})` : '';
  console.error(`${err instanceof Error ? err.message : String(err)}${cause}`);
  process.exitCode = 1;
}
