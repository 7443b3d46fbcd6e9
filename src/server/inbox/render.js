/**
 * The inbox's list and open thread, drawn from the state (state.js). Updates keep the focus and
 * the scroll where the person left them.
 */

import { $, el, timeFormat, when } from './dom.js';
import { idNumber, STATUS, state } from './state.js';

export function conversationName(c) {
  if (c.displayName) return c.displayName;
  const names = (c.patients ?? []).map((p) => [p.firstName, p.lastName].filter(Boolean).join(' '));
  return names.filter(Boolean).join(', ') || c.patientPhone || c.id;
}

const waiting = (c) => c.lastInboundAt && (!c.lastOutboundAt || c.lastInboundAt > c.lastOutboundAt);

export function renderConversations() {
  const list = $('conversations');
  // An update must not take the focus from the conversation a keyboard user is on.
  const focused = document.activeElement?.closest?.('#conversations a')?.dataset.id;
  const sorted = [...state.conversations.values()].sort(
    (a, b) =>
      (b.lastActivityAt ?? '').localeCompare(a.lastActivityAt ?? '') || idNumber(b.id) - idNumber(a.id),
  );
  list.replaceChildren(
    ...sorted.map((c) => {
      const needsReply = waiting(c);
      return el(
        'li',
        {},
        el(
          'a',
          {
            href: `#${c.id}`,
            'data-id': c.id,
            'aria-current': c.id === state.open ? 'true' : null,
            class: needsReply ? 'waiting' : null,
          },
          el('span', { class: 'name', dir: 'auto', text: conversationName(c) }),
          when(c.lastActivityAt),
          c.lastMessagePreview === null
            ? el('span', { class: 'preview no-text', text: 'Media or a sticker, no text' })
            : el('span', { class: 'preview', dir: 'auto', text: c.lastMessagePreview }),
          needsReply ? el('span', { class: 'badge', text: 'awaits a reply' }) : null,
        ),
      );
    }),
  );
  $('list-empty').hidden = sorted.length > 0;
  $('more-conversations').hidden = !state.conversationsCursor;
  if (focused) list.querySelector(`a[data-id="${CSS.escape(focused)}"]`)?.focus({ preventScroll: true });
}

function messageItem(m) {
  const status = STATUS[m.status] ?? { tick: '', label: m.status };
  const kind = (m.media?.type ?? 'media').toLowerCase();
  const media = !m.media?.available
    ? null
    : m.mediaLink?.url
      ? el('a', {
          class: 'media',
          dir: 'ltr',
          href: m.mediaLink.url,
          target: '_blank',
          rel: 'noopener noreferrer',
          text: `[${kind}]`,
        })
      : el('span', { class: 'media', dir: 'ltr', text: `[${kind}]` });
  const text = m.text ?? (media ? null : `[${m.type.toLowerCase()}]`);
  return el(
    'li',
    {
      id: `m-${m.id}`,
      class: `message ${m.direction === 'OUTBOUND' ? 'out' : 'in'}`,
      'data-status': m.status,
    },
    // The patient's text sets the paragraph's direction (the media label, dir="ltr", is left out
    // of that choice): a right-to-left message reads from the right, its punctuation at its end.
    el('p', { class: 'body', dir: 'auto' }, media, media && text ? ' ' : null, text),
    m.status === 'FAILED' && m.failureReason ? el('p', { class: 'failure', text: m.failureReason }) : null,
    el(
      'p',
      { class: 'stamp' },
      when(m.createdAt),
      m.direction === 'OUTBOUND'
        ? el(
            'span',
            { class: 'status', 'data-status': m.status, title: status.label },
            el('span', { 'aria-hidden': 'true', text: status.tick }),
            el('span', { class: 'visually-hidden', text: status.label }),
          )
        : null,
    ),
  );
}

const byTime = (a, b) =>
  (a.createdAt ?? '').localeCompare(b.createdAt ?? '') || idNumber(a.id) - idNumber(b.id);

/** Puts each message in place: changed ones replaced, new ones inserted in time order. */
export function renderMessages() {
  const list = $('messages');
  const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
  const sorted = [...state.messages.values()].sort(byTime);
  let previous = null;
  for (const m of sorted) {
    const current = document.getElementById(`m-${m.id}`);
    const fresh = messageItem(m);
    if (current?.isEqualNode(fresh)) {
      previous = current;
      continue;
    }
    if (current) current.replaceWith(fresh);
    else if (previous) previous.after(fresh);
    else list.prepend(fresh);
    previous = fresh;
  }
  if (atBottom) list.scrollTop = list.scrollHeight;
}

export function renderThreadHeader() {
  const c = state.conversations.get(state.open);
  if (!c) return;
  const name = conversationName(c);
  $('thread-title').textContent = name;
  const bits = [c.patientPhone === name ? null : c.patientPhone, c.isHandled ? 'Marked handled' : null];
  $('thread-meta').textContent = bits.filter(Boolean).join(' · ');
  const form = $('reply');
  form.hidden = false;
  $('reply-label').textContent = `Reply to ${conversationName(c)}`;
  const canWrite = Boolean(state.keys.write);
  $('reply-text').disabled = !canWrite;
  $('reply-send').disabled = !canWrite;
  // The window was judged when the conversation was read; a page left open sees it close.
  const closes = Date.parse(c.freeTextWindowExpiresAt ?? '');
  $('reply-hint').textContent = !canWrite
    ? 'Replying needs a chat:write key: add one under Keys.'
    : closes > Date.now()
      ? `Ctrl+Enter sends. The patient wrote within 24 hours: until ${timeFormat.format(closes)} the text goes out as it is.`
      : "Ctrl+Enter sends. The patient has not written in 24 hours: the text goes out in the clinic's message template.";
  clearTimeout(state.windowTimer);
  if (closes > Date.now() && state.keys.write)
    state.windowTimer = setTimeout(renderThreadHeader, Math.min(closes - Date.now() + 100, 2 ** 31 - 1));
}

export function clearThread() {
  $('messages').replaceChildren();
  $('thread-title').textContent = 'Choose a conversation';
  $('thread-meta').textContent = '';
  $('reply').hidden = true;
  $('earlier').hidden = true;
}
