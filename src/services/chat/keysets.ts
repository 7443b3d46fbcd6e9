import type { KeysetSpec } from '../../db/pagination.ts';
import type { Row } from '../resource.ts';

/**
 * The chat lists' orders. Browsing: most recent first. Syncing (`updated_since`): ascending
 * mutation order (`seq`, drawn per clinic in commit order by changes.ts), so a record changed
 * while a client pages moves behind the cursor and is read again, never skipped.
 */
export const conversationsByActivity: KeysetSpec<Row> = {
  tag: 'conv',
  sortBy: { prop: 'lastActivityAt', kind: 'date', dir: 'desc', nullable: true, get: (r) => r.lastActivityAt },
  idDir: 'desc',
  id: (r) => r.id,
};

export const messagesNewestFirst: KeysetSpec<Row> = {
  tag: 'msg',
  sortBy: { prop: 'createdAt', kind: 'date', dir: 'desc', get: (r) => r.createdAt },
  idDir: 'desc',
  id: (r) => r.id,
};

const bySeq = (tag: string): KeysetSpec<Row> => ({
  tag,
  sortBy: { prop: 'seq', kind: 'number', dir: 'asc', get: (r) => Number(r.seq) },
  idDir: 'asc',
  id: (r) => r.id,
});

export const conversationsBySeq = bySeq('convsync');
export const messagesBySeq = bySeq('msgsync');

/**
 * The first page of a sync starts at the first change at or after `updated_since`: found through
 * the (clinic, updated_at, seq) index, so the page does not scan every older change in `seq`
 * order to skip it. Later pages start at their cursor. (`updated_at` is not strictly monotone in
 * `seq` across instances' clocks; the filter `updated_at >= since` stays, so this start only
 * skips rows the filter would drop, except a change stamped earlier than one numbered before it,
 * which a client's overlap on its next sync catches: docs/chat.md.)
 */
export function syncStart(table: 'message' | 'conversation', clinicId: number, since: Date) {
  return {
    sql: `e.seq >= coalesce((select s.seq from "${table}" s where s.clinic_id = ? and s.updated_at >= ? order by s.updated_at, s.seq limit 1), 0)`,
    params: [clinicId, since.toISOString()],
  };
}
