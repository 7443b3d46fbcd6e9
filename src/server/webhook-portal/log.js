/**
 * The open endpoint's delivery log: one row per attempt, newest first, with its result, the
 * receiver's status, how long it took and the start of what it answered; each can be retried.
 * A poll puts new attempts in place and leaves the rest (and the focus) as they were.
 */

import { ENDPOINT, gql, randomKey, typeName } from './api.js';
import { $, el } from './dom.js';
import { POLL_SECONDS } from './poll.js';
import { sortedDeliveries, state } from './state.js';

/** Attempts come seconds apart: their times show the seconds. */
const attemptTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'short', timeStyle: 'medium' });
const when = (iso) => (iso ? el('time', { datetime: iso, text: attemptTime.format(new Date(iso)) }) : null);

/** A response excerpt this long or of several lines opens on demand. */
const SHORT = 60;

function responseCell(d) {
  if (d.error && !d.responseExcerpt)
    return el('td', { class: 'response' }, el('span', { class: 'error-text', text: d.error }));
  const text = d.responseExcerpt ?? '';
  if (!text) return el('td', { class: 'response muted', text: d.error ?? 'No body' });
  const long = text.length > SHORT || text.includes('\n');
  const excerpt = long
    ? el(
        'details',
        {},
        el('summary', { text: `${text.split('\n')[0].slice(0, SHORT)}…` }),
        el('pre', { text }),
      )
    : el('code', { text });
  return el(
    'td',
    { class: 'response' },
    excerpt,
    d.error ? el('p', { class: 'error-text', text: d.error }) : null,
  );
}

function row(d) {
  const ok = d.status === 'SUCCEEDED';
  return el(
    'tr',
    { id: `d-${d.id}`, 'data-status': d.status, class: state.seen.has(d.id) ? null : 'new' },
    el('td', {}, when(d.attemptedAt)),
    el(
      'td',
      {},
      el('span', { class: 'type', text: typeName(d.event.type) }),
      el('br'),
      el('code', { class: 'muted', text: d.event.id }),
    ),
    el('td', { class: 'attempt', text: `${d.attempt} · ${d.trigger === 'MANUAL' ? 'manual' : 'scheduled'}` }),
    el(
      'td',
      {},
      el('span', { class: `badge ${ok ? 'on' : 'bad'}`, text: ok ? 'Succeeded' : 'Failed' }),
      ' ',
      el('span', {
        class: 'http',
        text: d.responseStatus == null ? 'no answer' : `HTTP ${d.responseStatus}`,
      }),
      d.nextAttemptAt ? el('span', { class: 'next' }, 'next try ', when(d.nextAttemptAt)) : null,
    ),
    el('td', { class: 'num', text: d.durationMs == null ? '–' : `${d.durationMs} ms` }),
    responseCell(d),
    el(
      'td',
      {},
      el('button', {
        type: 'button',
        class: 'plain small',
        'data-retry': d.id,
        'aria-label': `Retry ${d.id} (${typeName(d.event.type)})`,
        text: 'Retry',
      }),
    ),
  );
}

const HEAD = ['When', 'Event', 'Attempt', 'Result', 'Duration', 'Response', ''];

/** Draws the log from the state; rows that did not change stay as they are. */
export function renderLog(e, refresh) {
  const table = $('log');
  if (!table) return;
  if (!table.tHead) {
    table.append(
      el('caption', { class: 'visually-hidden', text: `Delivery attempts to ${e.url}, newest first` }),
      el('thead', {}, el('tr', {}, ...HEAD.map((h) => el('th', { scope: 'col', text: h })))),
      el('tbody'),
    );
    table.addEventListener('click', (event) => {
      const id = event.target.closest?.('button[data-retry]')?.dataset.retry;
      if (id) retry(e, id, refresh);
    });
    $('log-hint').textContent = `Updated every ${POLL_SECONDS} seconds while this tab is shown.`;
  }
  const body = table.tBodies[0];
  let previous = null;
  const sorted = sortedDeliveries();
  for (const d of sorted) {
    const current = document.getElementById(`d-${d.id}`);
    const fresh = row(d);
    if (current?.isEqualNode(fresh)) {
      previous = current;
      continue;
    }
    if (current) current.replaceWith(fresh);
    else if (previous) previous.after(fresh);
    else body.prepend(fresh);
    previous = fresh;
  }
  // Marked new only while it arrives: the next draw shows it as any other.
  for (const d of sorted) state.seen.add(d.id);
  $('log-empty').hidden = sorted.length > 0;
  table.parentElement.hidden = sorted.length === 0;
  $('older').hidden = !state.deliveriesCursor;
}

async function retry(e, deliveryId, refresh) {
  const line = $('log-result');
  try {
    await gql(
      `mutation PortalRetry($input: RetryWebhookDeliveryInput!) { retryWebhookDelivery(input: $input) { webhookSubscription { ${ENDPOINT} } } }`,
      { input: { id: e.id, deliveryId, idempotencyKey: randomKey() } },
      state.key,
    );
    line.textContent = `Retry of ${deliveryId} queued: the new attempt shows at the top.`;
    line.classList.remove('error');
    await refresh();
  } catch (err) {
    if (state.onRefused(err)) return;
    line.textContent = `Not retried: ${err.message}`;
    line.classList.add('error');
  }
}
