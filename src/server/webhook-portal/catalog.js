/**
 * The event catalog: every type an endpoint can receive, what it means (the EventType enum's
 * text), and the sample a test event of it sends (its delivery's example in /v1/openapi.json).
 * Public documentation: it needs no key.
 */

import { loadSamples } from './api.js';
import { $, el } from './dom.js';
import { state } from './state.js';

export async function showCatalog() {
  $('view-title').textContent = 'Event catalog';
  const items = (state.catalog ?? []).map((c) =>
    el(
      'li',
      { id: `type-${c.type}`, class: 'event-type' },
      el(
        'p',
        { class: 'type-head' },
        el('code', { class: 'type', text: c.type }),
        c.type.startsWith('chat.') ? el('span', { class: 'badge scope', text: 'needs chat:read' }) : null,
      ),
      el('p', { class: 'what', text: c.description }),
      el(
        'details',
        { class: 'sample' },
        el('summary', { text: 'Sample delivery' }),
        el('pre', { 'data-sample': c.type, text: 'Reading the samples…' }),
      ),
    ),
  );
  $('view-body').replaceChildren(
    el('p', {
      class: 'about',
      text: 'What each event means and what its delivery carries. A test event sends the sample, marked "test": true. chat.* types carry message texts: an endpoint receives them only with chat:read on the key that subscribes it.',
    }),
    el('ul', { class: 'catalog', id: 'catalog' }, ...items),
  );
  let samples;
  try {
    samples = await loadSamples();
  } catch (e) {
    for (const pre of document.querySelectorAll('pre[data-sample]')) pre.textContent = e.message;
    return;
  }
  for (const pre of document.querySelectorAll('pre[data-sample]')) {
    const sample = samples.get(pre.dataset.sample);
    pre.textContent = sample ? JSON.stringify(sample, null, 2) : 'No sample in the OpenAPI document.';
  }
}
