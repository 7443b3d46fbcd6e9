/**
 * The live inbox's script, its entry module (src/server/inbox/page.ts serves it, and the modules
 * it imports, after graphql-ws's browser build). It runs in the browser, on the public API only:
 * api.js talks to the service, state.js holds what was read, render.js draws the list and the
 * thread, reply.js sends, keys.js keeps the keys. Here: starting, stopping, and what opens when.
 */

import {
  CONVERSATION,
  gql,
  liveClient,
  liveRefusal,
  MEDIA_LINK,
  MESSAGE,
  readKeyProblem,
  subscribe,
} from './api.js';
import { $, notice, setLive } from './dom.js';
import { cleanKey, forgetKeys, loadKeys, saveKeys } from './keys.js';
import { clearThread, renderConversations, renderMessages, renderThreadHeader } from './render.js';
import { reply } from './reply.js';
import { putConversation, putMessage, state } from './state.js';

const PAGE = 50;

function showKeys(show) {
  $('keys').hidden = !show;
  $('keys-button').setAttribute('aria-expanded', String(show));
  if (show) {
    $('read-key').value = state.keys.read;
    $('write-key').value = state.keys.write;
    $('read-key').focus();
  }
}

// --- the live connection ---------------------------------------------------------------------

function connect() {
  state.client?.dispose();
  state.keyWorked = false;
  let connectedBefore = false;
  const client = liveClient(state.keys.read, {
    connected: () => {
      state.keyWorked = true;
      setLive('live', 'Live');
      // Changes made while the socket was away came as no event: read again.
      if (connectedBefore) refresh();
      connectedBefore = true;
    },
    closed: (e) => {
      // A client disposed of (the keys forgotten or refused) closes after stop() said so.
      if (e?.code === 4403 || state.client !== client) return;
      setLive('reconnecting', 'Reconnecting…');
    },
  });
  state.client = client;
}

const live = (query, variables, onData) =>
  state.client ? subscribe(state.client, query, variables, onData, failed) : null;

/** A subscription ended by the server: a refused or revoked key, or an error of the operation. */
function failed(e) {
  if (e && typeof e.code === 'number') {
    if (e.code === 4403) return stop(liveRefusal(e.reason, state.keyWorked));
    setLive('offline', `Disconnected (${e.code}${e.reason ? ` ${e.reason}` : ''})`);
    return;
  }
  const error = Array.isArray(e) ? e[0] : e;
  const problem = readKeyProblem({ code: error?.extensions?.code });
  if (problem) return stop(problem);
  notice(`The live updates stopped: ${error?.message ?? 'the connection failed'}.`);
}

/** Stops everything live and asks for keys again, saying why. */
function stop(why) {
  state.stopList?.();
  state.stopThread?.();
  state.stopList = state.stopThread = null;
  state.client?.dispose();
  state.client = null;
  setLive('offline', 'Not connected');
  // What the refused key read stays on no screen.
  state.conversations.clear();
  state.conversationsCursor = null;
  state.open = null;
  state.messages.clear();
  clearThread();
  renderConversations();
  $('list-empty').hidden = true;
  notice(why);
  showKeys(true);
}

/** The conversation the address names; a malformed one (`#%E0`) names none rather than throw. */
function hashConversation() {
  try {
    return decodeURIComponent(location.hash.slice(1)) || null;
  } catch {
    return null;
  }
}

// --- reading ---------------------------------------------------------------------------------

async function loadConversations(after) {
  const data = await gql(
    `query InboxConversations($first: Int, $after: String) {
      conversations(first: $first, after: $after) { edges { node { ${CONVERSATION} } } pageInfo { hasNextPage endCursor } }
    }`,
    { first: PAGE, after },
    state.keys.read,
  );
  for (const { node } of data.conversations.edges) putConversation(node);
  const page = data.conversations.pageInfo;
  if (!after || state.conversationsCursor)
    state.conversationsCursor = page.hasNextPage ? page.endCursor : null;
  renderConversations();
}

/** Keeps a message of the open thread; one with media and no signed link yet has it read. */
function takeMessage(m) {
  if (!putMessage(m)) return false;
  if (m.media?.available && !state.messages.get(m.id).mediaLink) fetchMediaLink(m.id);
  return true;
}

/** A live event carries no signed link: it is read for the message on its own. */
function fetchMediaLink(id) {
  gql(`query InboxMedia($id: ID!) { message(id: $id) { ${MEDIA_LINK} } }`, { id }, state.keys.read)
    .then((data) => {
      const m = state.messages.get(id);
      if (!m || !data.message?.mediaLink) return;
      state.messages.set(id, { ...m, mediaLink: data.message.mediaLink });
      renderMessages();
    })
    .catch(() => {});
}

async function openConversation(id) {
  if (state.open === id) return;
  state.stopThread?.();
  state.stopThread = null;
  state.open = id;
  state.messages.clear();
  state.messagesCursor = null;
  state.pending = null;
  $('messages').replaceChildren();
  $('reply-error').textContent = '';
  $('earlier').hidden = true;
  renderConversations();
  if (!id) return clearThread();
  // Subscribed before reading, so nothing that happens in between is missed; what arrives
  // twice is put in once (putMessage keeps the later status).
  state.stopThread = live(
    `subscription InboxThread($id: ID!) { conversationMessages(conversationId: $id) { ${MESSAGE} } }`,
    { id },
    (data) => {
      if (takeMessage(data.conversationMessages)) renderMessages();
    },
  );
  await loadThread(id);
}

async function loadThread(id, after) {
  let data;
  try {
    data = await gql(
      `query InboxThread($id: ID!, $first: Int, $after: String) {
        conversation(id: $id) { ${CONVERSATION}
          messages(first: $first, after: $after) { edges { node { ${MESSAGE} ${MEDIA_LINK} } } pageInfo { hasNextPage endCursor } }
        }
      }`,
      { id, first: PAGE, after },
      state.keys.read,
    );
  } catch (e) {
    const problem = readKeyProblem(e);
    if (problem) return stop(problem);
    return notice(e.message);
  }
  if (state.open !== id) return;
  const c = data.conversation;
  if (!c) {
    $('thread-title').textContent = 'No such conversation';
    $('reply').hidden = true;
    return;
  }
  putConversation({ ...c, messages: undefined });
  for (const { node } of c.messages.edges) takeMessage(node);
  if (!after || state.messagesCursor)
    state.messagesCursor = c.messages.pageInfo.hasNextPage ? c.messages.pageInfo.endCursor : null;
  $('earlier').hidden = !state.messagesCursor;
  renderThreadHeader();
  renderConversations();
  const list = $('messages');
  const fromBottom = list.scrollHeight - list.scrollTop;
  renderMessages();
  // Earlier messages go above what is read: it stays where it was.
  if (after) list.scrollTop = list.scrollHeight - fromBottom;
  else list.scrollTop = list.scrollHeight;
}

// --- start -----------------------------------------------------------------------------------

/** Reads the list (and the open conversation) again: at start and after a reconnection. */
async function refresh() {
  try {
    await loadConversations();
    if (state.open) await loadThread(state.open);
  } catch (e) {
    const problem = readKeyProblem(e);
    if (problem) return stop(problem);
    notice(e.message);
  }
}

async function start() {
  notice('');
  showKeys(false);
  setLive('connecting', 'Connecting…');
  state.conversations.clear();
  state.conversationsCursor = null;
  try {
    await loadConversations();
  } catch (e) {
    return stop(readKeyProblem(e) ?? e.message);
  }
  connect();
  state.stopList?.();
  state.stopList = live(`subscription InboxList { conversationsChanged { ${CONVERSATION} } }`, {}, (data) => {
    putConversation(data.conversationsChanged);
    renderConversations();
    if (data.conversationsChanged.id === state.open) renderThreadHeader();
  });
  state.open = null;
  await openConversation(hashConversation());
}

document.addEventListener('DOMContentLoaded', () => {
  $('keys-form').addEventListener('submit', (event) => {
    event.preventDefault();
    state.keys = { read: cleanKey($('read-key').value), write: cleanKey($('write-key').value) };
    saveKeys(state.keys);
    // The keys form goes away: the focus goes where the work is, not back to the page's top.
    start().then(() => {
      if ($('keys').hidden) ($('conversations').querySelector('a') ?? $('thread')).focus();
    });
  });
  $('forget').addEventListener('click', () => {
    forgetKeys();
    state.keys = { read: '', write: '' };
    stop('The keys are forgotten in this browser.');
  });
  $('keys-button').addEventListener('click', () => showKeys($('keys').hidden));
  $('more-conversations').addEventListener('click', () =>
    loadConversations(state.conversationsCursor).catch((e) => notice(e.message)),
  );
  $('earlier').addEventListener('click', () => loadThread(state.open, state.messagesCursor));
  $('reply').addEventListener('submit', reply);
  $('reply-text').addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) $('reply').requestSubmit();
  });
  window.addEventListener('hashchange', () => {
    openConversation(hashConversation()).catch((e) => notice(e.message));
    $('thread').focus({ preventScroll: true });
  });
  state.keys = loadKeys();
  if (state.keys.read) start();
  else showKeys(true);
});
