/**
 * One endpoint: its state, the secret shown once, what can be done to it (edit, disable or
 * enable, rotate the secret, send a test event, recover, delete) and its delivery log. Built once
 * when opened; the polls redraw only the state block and the log, so a form half filled stays.
 */

import { ENDPOINT, enumValue, gql, randomKey, typeName } from './api.js';
import { $, el } from './dom.js';
import { renderEndpointState } from './endpoints.js';
import { renderLog } from './log.js';
import { state } from './state.js';

/** What each action reports: the result of the last one, said to screen readers too. */
const say = (id, text, bad = false) => {
  const line = $(id);
  line.textContent = text;
  line.classList.toggle('error', bad);
};

/** An action's failure: the key refused stops the portal, anything else is said. */
const failed = (id, e) => (state.onRefused(e) ? undefined : say(id, e.message, true));

/** The datetime-local value of a time, in the browser's zone. */
const localInput = (date) => {
  const d = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
};

function secretPanel(e) {
  if (state.revealed?.id !== e.id) return null;
  const input = el('input', {
    id: 'secret-value',
    readonly: true,
    value: state.revealed.secret,
    'aria-labelledby': 'secret-title',
    spellcheck: 'false',
  });
  const copy = el('button', { type: 'button', id: 'copy-secret', text: 'Copy' });
  copy.addEventListener('click', async () => {
    try {
      // Without a secure context (plain http to another host) there is no clipboard API.
      if (navigator.clipboard) await navigator.clipboard.writeText(input.value);
      else {
        input.select();
        if (!document.execCommand('copy')) throw new Error('refused');
      }
      say('copy-result', 'Copied.');
    } catch {
      input.select();
      say('copy-result', 'The browser refused to copy: the secret is selected, copy it with Ctrl+C.', true);
    }
  });
  const done = el('button', { type: 'button', id: 'secret-done', class: 'plain', text: 'I have stored it' });
  done.addEventListener('click', () => {
    state.revealed = null;
    $('secret').remove();
  });
  return el(
    'section',
    { id: 'secret', class: 'secret', 'aria-labelledby': 'secret-title' },
    el('h3', { id: 'secret-title', text: 'The signing secret, shown this once' }),
    el('p', {
      text: 'Copy it into your receiver now: every later read shows it masked. Receivers verify each delivery with it (docs/events.md, Signature and headers).',
    }),
    el('div', { class: 'secret-row' }, input, copy),
    el('p', { id: 'copy-result', class: 'result', role: 'status' }),
    done,
  );
}

function testForm(e) {
  const types = e.eventTypes.length ? e.eventTypes.map(typeName) : (state.catalog ?? []).map((c) => c.type);
  const select = el('select', { id: 'test-type' }, ...types.map((t) => el('option', { value: t, text: t })));
  const form = el(
    'form',
    { class: 'card', id: 'test-form', 'aria-labelledby': 'test-title' },
    el('h3', { id: 'test-title', text: 'Send a test event' }),
    el('p', {
      class: 'hint',
      text: "The type's sample, marked test: true, through the same queue and signing.",
    }),
    el('label', { for: 'test-type', text: 'Event type' }),
    el('div', { class: 'row' }, select, el('button', { type: 'submit', id: 'test-send', text: 'Send' })),
    el('p', { id: 'test-hint', class: 'hint' }),
    el('p', { id: 'test-result', class: 'result', role: 'status' }),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    say('test-result', 'Sending…');
    try {
      const data = await gql(
        'mutation PortalTest($input: TestWebhookInput!) { testWebhook(input: $input) { event { id type } } }',
        { input: { id: e.id, type: enumValue(select.value), idempotencyKey: randomKey() } },
        state.key,
      );
      const sample = data.testWebhook.event;
      say(
        'test-result',
        `Sample ${sample.id} (${typeName(sample.type)}) queued: its attempt shows in the log.`,
      );
    } catch (err) {
      failed('test-result', err);
    }
  });
  return form;
}

function recoverForm(e, refresh) {
  const since = el('input', {
    id: 'recover-since',
    type: 'datetime-local',
    required: true,
    value: localInput(new Date(Date.now() - 24 * 3600_000)),
  });
  const form = el(
    'form',
    { class: 'card', id: 'recover-form', 'aria-labelledby': 'recover-title' },
    el('h3', { id: 'recover-title', text: 'Recover' }),
    el('p', {
      class: 'hint',
      text: 'Sends again every event whose latest attempt since then failed, and every event since then it never received; enables the endpoint if it was disabled.',
    }),
    el('label', { for: 'recover-since', text: 'Since (your time)' }),
    el('div', { class: 'row' }, since, el('button', { type: 'submit', text: 'Recover' })),
    el('p', { id: 'recover-result', class: 'result', role: 'status' }),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const at = new Date(since.value);
    if (Number.isNaN(at.getTime())) return say('recover-result', 'Give a date and a time.', true);
    say('recover-result', 'Recovering…');
    try {
      await gql(
        `mutation PortalRecover($input: RecoverWebhookInput!) { recoverWebhook(input: $input) { webhookSubscription { ${ENDPOINT} } } }`,
        { input: { id: e.id, since: at.toISOString(), idempotencyKey: randomKey() } },
        state.key,
      );
      say('recover-result', 'Queued: the attempts show in the log as they run.');
      await refresh();
    } catch (err) {
      failed('recover-result', err);
    }
  });
  return form;
}

async function toggle(e, refresh) {
  const current = state.endpoints.get(e.id) ?? e;
  const enabled = !current.enabled;
  try {
    await gql(
      `mutation PortalToggle($input: UpdateWebhookInput!) { updateWebhook(input: $input) { webhookSubscription { ${ENDPOINT} } } }`,
      { input: { id: e.id, enabled } },
      state.key,
    );
    say(
      'actions-result',
      enabled ? 'Enabled: events are delivered again.' : 'Disabled: nothing is delivered.',
    );
    await refresh();
  } catch (err) {
    failed('actions-result', err);
  }
}

async function rotate(e, refresh) {
  try {
    const data = await gql(
      `mutation PortalRotate($input: RotateWebhookSecretInput!) { rotateWebhookSecret(input: $input) { webhookSubscription { ${ENDPOINT} } } }`,
      { input: { id: e.id, idempotencyKey: randomKey() } },
      state.key,
    );
    const rotated = data.rotateWebhookSecret.webhookSubscription;
    state.revealed = { id: e.id, secret: rotated.secret };
    $('secret')?.remove();
    $('endpoint-actions').after(secretPanel(rotated));
    say('actions-result', 'A new secret: the previous one keeps signing beside it for a while (see Secret).');
    $('secret-value').focus();
    await refresh();
  } catch (err) {
    failed('actions-result', err);
  }
}

async function remove(e) {
  if (!confirm(`Delete the endpoint ${e.url}? Its deliveries stop at once; this cannot be undone.`)) return;
  try {
    await gql(
      'mutation PortalDelete($input: DeleteWebhookInput!) { deleteWebhook(input: $input) { webhookSubscription { id } } }',
      { input: { id: e.id } },
      state.key,
    );
    state.endpoints.delete(e.id);
    location.hash = '';
  } catch (err) {
    failed('actions-result', err);
  }
}

/** Draws the endpoint `e` into the view; `refresh` reads it and its log again. */
export function showEndpoint(e, refresh) {
  const button = (id, text, run, cls) => {
    const b = el('button', { type: 'button', id, class: cls, text });
    b.addEventListener('click', () => run(e, refresh));
    return b;
  };
  const actions = el(
    'div',
    { class: 'toolbar', id: 'endpoint-actions' },
    el('a', { class: 'button', href: `#${e.id}/edit`, text: 'Edit' }),
    button('toggle', e.enabled ? 'Disable' : 'Enable', toggle),
    button('rotate', 'Rotate the secret', rotate),
    button('delete', 'Delete', remove, 'danger'),
    el('p', { id: 'actions-result', class: 'result', role: 'status' }),
  );
  $('view-body').replaceChildren(
    el('p', { id: 'endpoint-about', class: 'about' }),
    el('dl', { id: 'endpoint-state', class: 'facts' }),
    actions,
    secretPanel(e) ?? '',
    el('div', { class: 'cards' }, testForm(e), recoverForm(e, refresh)),
    el(
      'section',
      { class: 'log', 'aria-labelledby': 'log-title' },
      el(
        'div',
        { class: 'log-head' },
        el('h3', { id: 'log-title', text: 'Delivery log' }),
        el('p', { class: 'hint', id: 'log-hint' }),
      ),
      el('p', { id: 'log-result', class: 'result', role: 'status' }),
      el('div', { class: 'table-wrap' }, el('table', { id: 'log' })),
      el('p', { id: 'log-empty', class: 'empty', text: 'No attempts yet: send a test event.', hidden: true }),
      el('button', { type: 'button', id: 'older', class: 'plain', text: 'Older attempts', hidden: true }),
    ),
  );
  renderEndpointState(e);
  renderLog(e, refresh);
}
