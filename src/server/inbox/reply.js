/** The reply box: sends with the replying key, the same text sent again under the same key. */

import { gql, MESSAGE } from './api.js';
import { $ } from './dom.js';
import { renderMessages } from './render.js';
import { putMessage, state } from './state.js';

const randomKey = () =>
  [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('');

export async function reply(event) {
  event.preventDefault();
  const c = state.conversations.get(state.open);
  const text = $('reply-text').value;
  if (!c || !text.trim() || !state.keys.write) return;
  // Sent again after a lost answer, the same text keeps its key: the patient gets it once.
  if (state.pending?.text !== text || state.pending.conversation !== c.id)
    state.pending = { text, conversation: c.id, key: randomKey() };
  $('reply-send').disabled = true;
  $('reply-error').textContent = '';
  try {
    const data = await gql(
      `mutation InboxReply($input: SendMessageInput!) { sendMessage(input: $input) { message { ${MESSAGE} } } }`,
      { input: { to: c.patientPhone, text, idempotencyKey: state.pending.key } },
      state.keys.write,
    );
    state.pending = null;
    $('reply-text').value = '';
    if (putMessage(data.sendMessage.message)) renderMessages();
    $('messages').scrollTop = $('messages').scrollHeight;
  } catch (e) {
    $('reply-error').textContent =
      e.code === 'unauthenticated'
        ? 'The replying key was refused: it is unknown, mistyped or revoked. Paste a current chat:write key under Keys.'
        : e.code === 'forbidden'
          ? 'The replying key has no chat:write scope. Paste a chat:write key under Keys.'
          : `Not sent: ${e.message}`;
  } finally {
    $('reply-send').disabled = !state.keys.write;
  }
}
