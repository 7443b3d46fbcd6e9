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
