/**
 * The webhook portal's script, its entry module (src/server/webhook-portal/page.ts serves it and
 * the modules it imports). It runs in the browser, on the public API only: api.js talks to the
 * service, state.js holds what was read, endpoints.js draws the list, endpoint-view.js one
 * endpoint and its actions, log.js its delivery log, endpoint-form.js adds and edits, catalog.js
 * shows the event types, poll.js keeps it all current. Here: the key, the address, the polls.
 */

import { DELIVERY, ENDPOINT, gql, keyProblem, loadCatalog } from './api.js';
import { showCatalog } from './catalog.js';
import { $, el, notice, setLive } from './dom.js';
import { showForm } from './endpoint-form.js';
import { showEndpoint } from './endpoint-view.js';
import { renderEndpointState, renderList } from './endpoints.js';
import { cleanKey, forgetKey, loadKey, saveKey } from './key.js';
import { renderLog } from './log.js';
import { POLL_SECONDS, startPolling } from './poll.js';
import { state } from './state.js';

const LOG_PAGE = 25;
let stopPolling = null;
/** The notice says a poll failed: the next one that succeeds takes it away. */
let pollFailed = false;

function showKey(show) {
  $('key').hidden = !show;
  $('key-button').setAttribute('aria-expanded', String(show));
  if (show) {
    $('key-input').value = state.key;
    $('key-input').focus();
  }
}

// --- reading -----------------------------------------------------------------------------------

async function loadEndpoints() {
  const data = await gql(
    `query PortalEndpoints { webhooks(first: 50) {
      edges { node { ${ENDPOINT} deliveries(first: 1) { edges { node { status attemptedAt } } } } }
      pageInfo { hasNextPage } } }`,
    {},
    state.key,
  );
  state.endpoints = new Map(
    data.webhooks.edges.map(({ node }) => [
      node.id,
      { ...node, latest: node.deliveries.edges[0]?.node ?? null, deliveries: undefined },
    ]),
  );
  state.moreEndpoints = data.webhooks.pageInfo.hasNextPage;
  renderList();
}

/** The endpoint `id` with a page of its log (the newest, or the one after `after`); null if none. */
async function loadEndpoint(id, after) {
  let data;
  try {
    data = await gql(
      `query PortalEndpoint($id: ID!, $first: Int, $after: String) { node(id: $id) { ... on WebhookSubscription {
        ${ENDPOINT} deliveries(first: $first, after: $after) { edges { node { ${DELIVERY} } } pageInfo { hasNextPage endCursor } } } } }`,
      { id, first: LOG_PAGE, after },
      state.key,
    );
  } catch (e) {
    if (e.code === 'not_found') return null;
    throw e;
  }
  const e = data.node;
  if (!e?.url) return null;
  for (const { node } of e.deliveries.edges) state.deliveries.set(node.id, node);
  // The newest page read again leaves the cursor to older pages where it was.
  if (after || !state.deliveriesCursor)
    state.deliveriesCursor = e.deliveries.pageInfo.hasNextPage ? e.deliveries.pageInfo.endCursor : null;
  return { ...e, deliveries: undefined, latest: e.deliveries.edges[0]?.node ?? null };
}

/** What a poll does: the list, and the open endpoint with its newest attempts. */
async function refresh() {
  try {
    await loadEndpoints();
    const { view, id } = state.route;
    if (view === 'endpoint') {
      const e = await loadEndpoint(id);
      if (state.route.id !== id) return;
      if (!e) return noSuchEndpoint(id);
      renderEndpointState(e);
      renderLog(e, refresh);
    }
    setLive('live', `Live · every ${POLL_SECONDS} s`);
    if (pollFailed) notice('');
    pollFailed = false;
  } catch (e) {
    if (stopIfRefused(e)) return;
    setLive('reconnecting', e.code === 'network' ? 'Service unreachable: retrying' : 'Retrying');
    if (e.code !== 'network') {
      notice(`The page could not be brought up to date: ${e.message}`);
      pollFailed = true;
    }
  }
}

/** Stops everything and asks for a key again when `e` is a refusal of the key; true then. */
/** A refused key (unknown, revoked, without the scope) is forgotten: a reload does not send it again. */
function stopIfRefused(e) {
  const problem = keyProblem(e);
  if (!problem) return false;
  forgetKey();
  stop(problem);
  return true;
}

function stop(why) {
  stopPolling?.();
  stopPolling = null;
  state.started = false;
  state.endpoints.clear();
  state.deliveries.clear();
  state.revealed = null;
  renderList();
  setLive('offline', 'Not connected');
  if (state.route.view !== 'catalog') showWelcome();
  notice(why);
  showKey(true);
}

// --- the address -------------------------------------------------------------------------------

/** `#wh_3`, `#wh_3/edit`, `#new`, `#catalog`, or nothing; a malformed one names nothing. */
function parseHash() {
  let hash;
  try {
    hash = decodeURIComponent(location.hash.slice(1));
  } catch {
    hash = '';
  }
  if (hash === 'new' || hash === 'catalog') return { view: hash };
  const [, id, edit] = /^(wh_\d+)(\/edit)?$/.exec(hash) ?? [];
  if (id) return { view: edit ? 'edit' : 'endpoint', id };
  return { view: 'list' };
}

function showWelcome() {
  $('view-title').textContent = 'Choose an endpoint';
  $('view-body').replaceChildren(
    el('p', {
      class: 'about',
      text: 'Each endpoint is a URL the clinic’s events are POSTed to, signed. Add one, send it a test event, and watch the attempt arrive in its delivery log; the event catalog says what each type carries.',
    }),
  );
}

function noSuchEndpoint(id) {
  $('view-title').textContent = 'No such endpoint';
  $('view-body').replaceChildren(
    el('p', { class: 'about', text: `${id} is deleted, or out of this key's sight.` }),
  );
}

async function route() {
  const to = parseHash();
  const moved = to.view !== state.route.view || to.id !== state.route.id;
  state.route = to;
  if (moved && state.revealed?.id !== to.id) state.revealed = null;
  renderList();
  if (to.view === 'catalog') return showCatalog();
  if (!state.started) return showWelcome();
  if (to.view === 'list') return showWelcome();
  if (to.view === 'new') return showForm(null);
  if (to.view === 'edit') {
    const e = state.endpoints.get(to.id) ?? (await loadEndpoint(to.id));
    if (state.route !== to) return;
    return e ? showForm(e) : noSuchEndpoint(to.id);
  }
  state.deliveries.clear();
  state.deliveriesCursor = null;
  state.seen.clear();
  $('view-title').textContent = state.endpoints.get(to.id)?.url ?? to.id;
  $('view-body').replaceChildren();
  // Opened after a change (a save, a creation): the list says so now, not at the next poll.
  await loadEndpoints();
  const e = await loadEndpoint(to.id);
  if (state.route !== to) return;
  if (!e) return noSuchEndpoint(to.id);
  // What is there when the endpoint opens is not new; what arrives while it is open is.
  for (const id of state.deliveries.keys()) state.seen.add(id);
  showEndpoint(e, refresh);
  $('older').addEventListener('click', async () => {
    try {
      await loadEndpoint(to.id, state.deliveriesCursor);
      renderLog(e, refresh);
    } catch (err) {
      notice(err.message);
    }
  });
}

// --- start -------------------------------------------------------------------------------------

async function start() {
  notice('');
  showKey(false);
  setLive('connecting', 'Connecting…');
  try {
    await loadEndpoints();
  } catch (e) {
    if (stopIfRefused(e)) return;
    return stop(e.message);
  }
  // Kept only once the service took it: a mistyped paste (a secret, a password) is not stored.
  saveKey(state.key);
  state.started = true;
  renderList();
  setLive('live', `Live · every ${POLL_SECONDS} s`);
  stopPolling?.();
  stopPolling = startPolling(refresh);
  await route();
}

document.addEventListener('DOMContentLoaded', async () => {
  state.onRefused = stopIfRefused;
  $('key-form').addEventListener('submit', (event) => {
    event.preventDefault();
    state.key = cleanKey($('key-input').value);
    start().then(() => {
      if ($('key').hidden) ($('endpoints').querySelector('a') ?? $('add')).focus();
    });
  });
  $('forget').addEventListener('click', () => {
    forgetKey();
    state.key = '';
    stop('The key is forgotten in this browser.');
  });
  $('key-button').addEventListener('click', () => showKey($('key').hidden));
  window.addEventListener('hashchange', () => {
    route().catch((e) => stopIfRefused(e) || notice(e.message));
    $('view').focus({ preventScroll: true });
  });
  try {
    state.catalog = await loadCatalog();
  } catch (e) {
    notice(`The event catalog could not be read: ${e.message}`);
  }
  state.key = loadKey();
  if (state.key) start();
  else {
    showKey(true);
    route();
  }
});
