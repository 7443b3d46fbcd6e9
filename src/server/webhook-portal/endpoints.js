/**
 * The endpoints list, and the state block of the open endpoint: enabled or disabled (and why), its
 * failure streak, its secret as every read masks it. Redrawn on each poll, keeping the focus.
 */

import { $, el, timeFormat, when } from './dom.js';
import { state } from './state.js';

/** The service's own count of failed attempts in a row (failureStreak), else the newest attempt. */
export function streakText(endpoint) {
  const n = endpoint.failureStreak;
  if (n > 0) {
    const since = endpoint.failingSince ? ` since ${timeFormat.format(new Date(endpoint.failingSince))}` : '';
    return { kind: 'failing', text: `Failing: ${n} ${n === 1 ? 'attempt' : 'attempts'} in a row${since}` };
  }
  const latest = endpoint.latest;
  if (!latest) return { kind: 'none', text: 'No attempts yet' };
  if (latest.status === 'SUCCEEDED')
    return { kind: 'ok', text: `Last attempt succeeded ${timeFormat.format(new Date(latest.attemptedAt))}` };
  return { kind: 'none', text: `Last attempt: ${latest.status.toLowerCase()}` };
}

const typesText = (types) =>
  types.length ? types.map((t) => t.toLowerCase().replaceAll('_', '.')).join(', ') : 'Every event type';

export function renderList() {
  const list = $('endpoints');
  const focused = document.activeElement?.closest?.('#endpoints a')?.dataset.id;
  const open = state.route.id;
  list.replaceChildren(
    ...[...state.endpoints.values()].map((e) => {
      const streak = streakText(e);
      return el(
        'li',
        {},
        el(
          'a',
          { href: `#${e.id}`, 'data-id': e.id, 'aria-current': e.id === open ? 'true' : null },
          el('span', { class: 'url', text: e.url }),
          el('span', {
            class: `badge ${e.enabled ? 'on' : 'off'}`,
            text: e.enabled ? 'Enabled' : 'Disabled',
          }),
          e.description ? el('span', { class: 'desc', text: e.description }) : null,
          el('span', { class: `streak ${streak.kind}`, text: streak.text }),
        ),
      );
    }),
  );
  $('list-empty').hidden = !state.started || state.endpoints.size > 0;
  $('add').hidden = !state.started;
  if (state.route.view === 'catalog') $('catalog-link').setAttribute('aria-current', 'page');
  else $('catalog-link').removeAttribute('aria-current');
  $('list-more').hidden = !state.moreEndpoints;
  if (focused) list.querySelector(`a[data-id="${CSS.escape(focused)}"]`)?.focus({ preventScroll: true });
}

/** The open endpoint's state: what is true of it now. */
export function renderEndpointState(e) {
  const box = $('endpoint-state');
  if (!box) return;
  const streak = streakText(e);
  const previous = Date.parse(e.previousSecretExpiresAt ?? '') > Date.now();
  const row = (name, ...value) => [el('dt', { text: name }), el('dd', {}, ...value)];
  box.replaceChildren(
    ...row(
      'State',
      el('span', { class: `badge ${e.enabled ? 'on' : 'off'}`, text: e.enabled ? 'Enabled' : 'Disabled' }),
      e.disabledAt ? el('span', { class: 'muted' }, ' since ', when(e.disabledAt)) : null,
    ),
    ...(e.disabledReason ? row('Why', el('span', { id: 'disabled-reason', text: e.disabledReason })) : []),
    ...row('Deliveries', el('span', { id: 'streak', class: `streak ${streak.kind}`, text: streak.text })),
    ...row('Event types', el('span', { text: typesText(e.eventTypes) })),
    ...row(
      'Secret',
      el('code', { id: 'masked-secret', text: e.secret }),
      previous
        ? el(
            'span',
            { class: 'muted' },
            ' (the previous one also signs until ',
            when(e.previousSecretExpiresAt),
            ')',
          )
        : null,
    ),
    ...row('Created', when(e.createdAt)),
  );
  $('view-title').textContent = e.url;
  const about = $('endpoint-about');
  about.textContent = e.description ?? '';
  about.hidden = !e.description;
  const toggle = $('toggle');
  toggle.textContent = e.enabled ? 'Disable' : 'Enable';
  $('test-send').disabled = !e.enabled;
  $('test-hint').textContent = e.enabled ? '' : 'A disabled endpoint receives nothing: enable it first.';
}
