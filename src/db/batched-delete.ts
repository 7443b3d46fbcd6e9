import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Deletes the rows of `table` whose ids `selectIds` picks (its last parameter is the batch size),
 * one batch per statement, so a backlog never holds long locks, and at most `maxBatches`
 * batches, so one sweep's work stays bounded. Rows another sweep (another instance) is deleting
 * are skipped, not waited for: `selectIds` ends with `for update skip locked`. Answers how many
 * rows went.
 */
export async function deleteInBatches(
  em: EntityManager,
  table: string,
  selectIds: string,
  params: unknown[],
  opts: { batch: number; maxBatches: number },
): Promise<number> {
  const conn = em.getConnection();
  let deleted = 0;
  for (let i = 0; i < opts.maxBatches; i++) {
    const res = await conn.execute<{ affectedRows: number }>(
      `delete from "${table}" where "id" in (${selectIds})`,
      [...params, opts.batch],
      'run',
    );
    deleted += res.affectedRows;
    if (res.affectedRows < opts.batch) break;
  }
  return deleted;
}
