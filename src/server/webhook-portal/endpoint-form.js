/**
 * The form that adds an endpoint or changes one: its URL, the event types it receives (every
 * type, or those ticked in the catalog), its description and, once it exists, whether it is
 * enabled. A field the service refuses is marked and named.
 */

import { ENDPOINT, enumValue, gql, randomKey, typeName } from './api.js';
import { $, el } from './dom.js';
import { state } from './state.js';

/** The spec's rule: a chat.* type carries message bodies, so it needs chat:read on the key too. */
const needsChatRead = (type) => type.startsWith('chat.');

/** The service names a refused input by its REST or GraphQL name, under `input.` in GraphQL. */
const FIELD_OF = { url: 'url', event_types: 'types', eventTypes: 'types', description: 'description' };

function typeChoices(chosen) {
  const families = new Map();
  for (const c of state.catalog ?? []) {
    const family = c.type.split('.')[0];
    if (!families.has(family)) families.set(family, []);
    families.get(family).push(c);
  }
  return [...families].map(([family, items]) =>
    el(
      'div',
      { class: 'family' },
      el('p', { class: 'family-name', text: family }),
      ...items.map((c) =>
        el(
          'label',
          { class: 'choice' },
          el('input', { type: 'checkbox', name: 'type', value: c.type, checked: chosen.has(c.type) }),
          ' ',
          el('code', { text: c.type }),
          needsChatRead(c.type) ? el('span', { class: 'badge scope', text: 'needs chat:read' }) : null,
          el('span', { class: 'what', text: c.description }),
        ),
      ),
    ),
  );
}

/** Draws the form: `existing` is the endpoint to change, or null to add one. */
export function showForm(existing) {
  const chosen = new Set((existing?.eventTypes ?? []).map(typeName));
  const every = !existing || chosen.size === 0;
  const field = (id, label, input, hint) =>
    el(
      'p',
      { class: 'field' },
      el('label', { for: id, text: label }),
      input,
      hint ? el('span', { class: 'hint', id: `${id}-hint`, text: hint }) : null,
      el('span', { class: 'field-error', id: `${id}-error` }),
    );
  const form = el(
    'form',
    { id: 'endpoint-form', class: 'endpoint-form', novalidate: true },
    field(
      'url',
      'Endpoint URL',
      el('input', {
        id: 'url',
        type: 'url',
        required: true,
        value: existing?.url ?? '',
        placeholder: 'https://example.com/webhooks',
        spellcheck: 'false',
        'aria-describedby': 'url-hint url-error',
      }),
      "Events are POSTed here, signed with the endpoint's secret. https to a public host (a test clinic's may be http on this machine).",
    ),
    field(
      'description',
      'Description (optional)',
      el('textarea', { id: 'description', rows: 2, maxlength: 500, 'aria-describedby': 'description-error' }),
    ),
    el(
      'fieldset',
      { id: 'types', 'aria-describedby': 'types-error' },
      el('legend', { text: 'Event types' }),
      el(
        'label',
        { class: 'choice' },
        el('input', { type: 'radio', name: 'which', id: 'every-type', value: 'every', checked: every }),
        ' Every event type (chat.* ones only when the key has chat:read)',
      ),
      el(
        'label',
        { class: 'choice' },
        el('input', { type: 'radio', name: 'which', id: 'some-types', value: 'some', checked: !every }),
        ' Only the types ticked below',
      ),
      el('div', { class: 'types' }, ...typeChoices(chosen)),
      el('span', { class: 'field-error', id: 'types-error' }),
    ),
    existing
      ? el(
          'p',
          { class: 'field' },
          el(
            'label',
            { class: 'choice' },
            el('input', { type: 'checkbox', id: 'enabled', checked: existing.enabled }),
            ' Enabled: events are delivered',
          ),
        )
      : null,
    el(
      'p',
      { class: 'actions' },
      el('button', { type: 'submit', text: existing ? 'Save the changes' : 'Add the endpoint' }),
      el('a', { class: 'button plain', href: existing ? `#${existing.id}` : '#', text: 'Cancel' }),
    ),
    el('p', { id: 'form-error', class: 'error', role: 'alert' }),
  );
  form.querySelector('#description').value = existing?.description ?? '';
  // Ticking a type means "only these"; "every type" leaves the ticks for later.
  form.addEventListener('change', (event) => {
    if (event.target.name === 'type' && event.target.checked)
      form.querySelector('#some-types').checked = true;
  });
  // A refusal is about what was sent: once the field changes it no longer applies.
  form.addEventListener('input', (event) => {
    const marked = event.target.closest('[aria-invalid]');
    if (!marked) return;
    marked.removeAttribute('aria-invalid');
    form.querySelector(`#${marked.id}-error`).textContent = '';
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    save(form, existing);
  });
  $('view-title').textContent = existing ? `Edit ${existing.url}` : 'Add an endpoint';
  $('view-body').replaceChildren(form);
}

function clearErrors(form) {
  for (const e of form.querySelectorAll('.field-error')) e.textContent = '';
  for (const e of form.querySelectorAll('[aria-invalid]')) e.removeAttribute('aria-invalid');
  $('form-error').textContent = '';
}

async function save(form, existing) {
  clearErrors(form);
  const url = form.querySelector('#url').value.trim();
  const description = form.querySelector('#description').value.trim();
  const some = form.querySelector('#some-types').checked;
  const types = some ? [...form.querySelectorAll('input[name=type]:checked')].map((i) => i.value) : [];
  if (some && !types.length) return refuse(form, 'types', 'Tick at least one type, or choose every type.');
  if (!url) return refuse(form, 'url', 'Give the URL events are sent to.');
  const input = { url, eventTypes: types.map(enumValue) };
  const button = form.querySelector('button[type=submit]');
  button.disabled = true;
  try {
    if (existing) {
      await gql(
        `mutation PortalUpdate($input: UpdateWebhookInput!) { updateWebhook(input: $input) { webhookSubscription { ${ENDPOINT} } } }`,
        {
          input: {
            ...input,
            id: existing.id,
            expectedUpdatedAt: existing.updatedAt,
            description: description || null,
            enabled: form.querySelector('#enabled').checked,
          },
        },
        state.key,
      );
      location.hash = existing.id;
      return;
    }
    // Sent again after a lost answer, the same input keeps its key: one endpoint, its secret whole.
    const same = JSON.stringify({ ...input, description });
    if (state.pendingCreate?.input !== same) state.pendingCreate = { input: same, key: randomKey() };
    const data = await gql(
      `mutation PortalCreate($input: CreateWebhookInput!) { createWebhook(input: $input) { webhookSubscription { ${ENDPOINT} } } }`,
      {
        input: { ...input, ...(description ? { description } : {}), idempotencyKey: state.pendingCreate.key },
      },
      state.key,
    );
    state.pendingCreate = null;
    const created = data.createWebhook.webhookSubscription;
    state.revealed = { id: created.id, secret: created.secret };
    location.hash = created.id;
  } catch (e) {
    if (state.onRefused(e)) return;
    if (e.code === 'precondition_failed')
      return refuse(form, null, 'The endpoint changed since this form was opened: open it again to see how.');
    refuse(form, FIELD_OF[String(e.param ?? '').replace(/^input\./, '')] ?? null, e.message);
  } finally {
    button.disabled = false;
  }
}

function refuse(form, fieldId, message) {
  if (!fieldId) {
    $('form-error').textContent = message;
    return;
  }
  form.querySelector(`#${fieldId}-error`).textContent = message;
  const target = form.querySelector(`#${fieldId}`);
  target.setAttribute('aria-invalid', 'true');
  (fieldId === 'types' ? target.querySelector('input') : target).focus();
  $('form-error').textContent = 'The endpoint was not saved: see the marked field.';
}
