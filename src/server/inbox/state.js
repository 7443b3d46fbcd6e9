/** What the inbox holds: the conversations read, the open one's messages, the live client. */

/** Where a message stands, in order: a later status never gives way to an earlier one. */
export const STATUS = {
  RECEIVED: { rank: 0, tick: '', label: 'Received' },
  QUEUED: { rank: 0, tick: '◷', label: 'Queued' },
  SENT: { rank: 1, tick: '✓', label: 'Sent' },
  DELIVERED: { rank: 2, tick: '✓✓', label: 'Delivered' },
  READ: { rank: 3, tick: '✓✓', label: 'Read' },
  FAILED: { rank: 4, tick: '!', label: 'Failed' },
};

export const state = {
  keys: { read: '', write: '' },
  /** conv id → conversation */
  conversations: new Map(),
  conversationsCursor: null,
  open: null,
  /** message id → message, of the open conversation */
  messages: new Map(),
  messagesCursor: null,
  client: null,
  /** The live connection took the reading key once: a later refusal means it was revoked. */
  keyWorked: false,
  stopList: null,
  stopThread: null,
  /** The reply being sent: the same text sent again keeps its Idempotency key. */
  pending: null,
  windowTimer: undefined,
};

const newer = (a, b) => (a ?? '') >= (b ?? '');
export const idNumber = (id) => Number(String(id).replace(/^\D+/, '')) || 0;

export function putConversation(c) {
  const had = state.conversations.get(c.id);
  if (had && !newer(c.updatedAt, had.updatedAt)) return;
  state.conversations.set(c.id, c);
}

/** Keeps a message of the open conversation unless what is kept is as far along; true when kept. */
export function putMessage(m) {
  if (m.conversationId !== state.open) return false;
  const had = state.messages.get(m.id);
  if (had) {
    const rank = (x) => STATUS[x.status]?.rank ?? 0;
    if (rank(m) < rank(had) || (rank(m) === rank(had) && !newer(m.updatedAt, had.updatedAt))) return false;
  }
  state.messages.set(m.id, m.mediaLink || !had?.mediaLink ? m : { ...m, mediaLink: had.mediaLink });
  return true;
}
