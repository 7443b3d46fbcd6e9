/**
 * The only SQL written against pg-boss's own tables (schema `pgboss`, pg-boss 12.38's layout,
 * pinned in package.json: check these when upgrading it). Everything else goes through pg-boss's
 * API (src/lib/job-queue.ts); these are what its API has no form for. Each is a fragment or a
 * statement its caller runs inside its own statement or transaction.
 */
/** The schema pg-boss keeps its tables in (it creates and migrates it itself at start). */
export const QUEUE_SCHEMA = 'pgboss';

const job = `"${QUEUE_SCHEMA}"."job"`;

/**
 * A CTE body completing the claimed active jobs of queue `$name` whose (id, retry_count) are the
 * rows of `from` ("job", "retry_count" columns): the fenced completion a worker's success takes,
 * in the same statement as what it records (src/webhooks/success-log.ts). Returns their ids.
 */
export const completeClaimed = (nameParam: string, from: string) =>
  `update ${job} as "q" set "state" = 'completed', "completed_on" = "${QUEUE_SCHEMA}".job_now()
     from ${from} where "q"."name" = ${nameParam} and "q"."id" = ${from}."job" and "q"."state" = 'active'
       and "q"."retry_count" = ${from}."retry_count"
     returning "q"."id"`;

/** Deletes the waiting jobs (created or retry) of one group of a queue: pg-boss deletes by id or queue only. */
export const DELETE_WAITING_IN_GROUP = `delete from ${job} where "name" = ? and "group_id" = ? and "state" in ('created', 'retry')`;

/**
 * Live jobs of every queue by state, each count capped: one range of pg-boss's index of live jobs
 * (name, state) per count; a state given as a parameter instead of a literal made PostgreSQL scan
 * the table (950 ms against 40 on 200,000 jobs). One `limit ?` parameter per state.
 */
export const QUEUE_STATES = ['created', 'retry', 'active'] as const;
export const QUEUE_DEPTHS = `select "q"."name", ${QUEUE_STATES.map(
  (state) =>
    `(select count(*) from (select 1 from ${job} as "j" where "j"."name" = "q"."name"
      and "j"."state" = '${state}' limit ?) as "c") as "${state}"`,
).join(', ')} from "${QUEUE_SCHEMA}"."queue" as "q"`;

/**
 * The data of a queue's live jobs, oldest first, at most `limit ?` waiting and `limit ?` under
 * way: waiting ones through pg-boss's index of waiting jobs (name, priority desc, created_on),
 * under way ones apart. Parameters: name, limit, name, limit.
 */
export const LIVE_JOB_DATA = `(select "data" from ${job} where "name" = ? and "state" < 'active' and not "blocked"
   order by "priority" desc, "created_on" limit ?)
  union all
  (select "data" from ${job} where "name" = ? and "state" = 'active'
   order by "created_on" limit ?)`;

/**
 * Gives claimed jobs back untouched, as pg-boss 12.38's own `restore` does for its local group
 * excess (plans.restoreJobs; not exposed on PgBoss): created again, not started, so the next claim
 * counts no attempt (src/lib/capped-worker.ts). Parameters: $1 queue, $2 ids.
 */
export const GIVE_BACK = `update ${job} set "state" = 'created', "started_on" = null, "heartbeat_on" = null, "upsert_by_key" = null
  where "name" = $1 and "id" = any($2::uuid[]) and "state" = 'active'`;

/**
 * SQL condition: queue `queue` has a live job (waiting, waiting to retry or under way) in the group
 * that is the one parameter whose data's `key` is `column`: reads pg-boss's index of live jobs
 * (name, state), never the queue's history (src/services/chat/send-jobs.ts).
 */
export const liveJobInGroup = (queue: string, key: string, column: string) =>
  `exists (select 1 from ${job} "j" where "j"."name" = '${queue}'
     and "j"."state" in ('created', 'retry', 'active') and "j"."group_id" = ?
     and "j"."data"->>'${key}' = ${column}::text)`;

/** How many live jobs queue `$1` has (waiting, waiting to retry or under way). */
export const LIVE_JOB_COUNT = `select count(*)::int as n from ${job} where "name" = $1 and "state" in ('created', 'retry', 'active')`;
