import type pg from 'pg';

/**
 * Every service process that signs with its secrets (media links, the network's callbacks) keeps
 * one session connection whose application_name ends in a hash of them (src/lib/secrets.ts): an
 * instance's event relay, a worker's presence. A killed process's connection goes with it, so the
 * live ones are what pg_stat_activity shows, and a process whose hash differs from theirs refuses
 * to start (src/server/prove-connections.ts).
 */
const TAGGED = ['events', 'worker'] as const;

/** `clinic-gateway <kind> <tag>`, the application_name of a tagged connection. */
export const taggedName = (kind: (typeof TAGGED)[number], tag: string) => `clinic-gateway ${kind} ${tag}`;

/** The tags of the other processes' tagged connections on `client`'s database. */
export async function otherProcessTags(client: pg.Client): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `select application_name as "name" from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid() and application_name like any($1)`,
    [TAGGED.map((kind) => `${taggedName(kind, '')}%`)],
  );
  return rows.map((r) => r.name.slice(r.name.lastIndexOf(' ') + 1));
}
