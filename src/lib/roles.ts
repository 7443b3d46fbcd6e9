/**
 * What a process of the service does (docs/scale.md, Roles). `npm start` and `npm run worker` are
 * one composition (src/server/run-process.ts) with different default roles, ROLES choosing others:
 * - http: the REST, GraphQL and websocket server, with the event relay its subscribers need;
 * - deliveries: webhook delivery attempts (src/webhooks/worker.ts);
 * - sends: chat sends to the messaging network and its sandbox's receipts (src/services/chat);
 * - sweeps: the cluster's periodic clean-ups, once per period whoever runs them (src/server/sweeps.ts).
 */
export const ROLES = ['http', 'deliveries', 'sends', 'sweeps'] as const;
export type Role = (typeof ROLES)[number];

/** `npm start`'s roles. */
export const SERVICE_ROLES: readonly Role[] = ROLES;
/** `npm run worker`'s roles: everything but the server. */
export const WORKER_ROLES: readonly Role[] = ['deliveries', 'sends', 'sweeps'];

/** ROLES=http,deliveries,… ; throws naming what is not a role. */
export function parseRoles(text: string): Role[] {
  const names = text
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  const unknown = names.filter((r) => !(ROLES as readonly string[]).includes(r));
  if (unknown.length) throw new Error(`not a role: ${unknown.join(', ')} (roles: ${ROLES.join(', ')})`);
  if (!names.length) throw new Error(`no role given (roles: ${ROLES.join(', ')})`);
  return [...new Set(names)] as Role[];
}
