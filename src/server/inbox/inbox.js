/**
 * The live inbox's script (src/server/inbox/page.ts serves it after graphql-ws's browser build,
 * the global `graphqlWs`). It runs in the browser, on the public API only: queries and the reply
 * over POST /graphql, the live part over graphql-ws with the reading key in `connection_init`.
 * Everything shown is put in with textContent, never parsed as HTML: a patient writes the texts.
 */

(() => {
  const STORE = { read: 'clinic-gateway.inbox.readKey', write: 'clinic-gateway.inbox.writeKey' };
  const PAGE = 50;
  const http = new URL('/graphql', location.href).href;
  const ws = http.replace(/^http/, 'ws');

  const CONVERSATION = `id displayName patientPhone lastMessagePreview lastActivityAt lastInboundAt
    lastOutboundAt isHandled freeTextWindowExpiresAt updatedAt patients { firstName lastName }`;
  const MESSAGE = `id conversationId direction type status text createdAt updatedAt failureReason
    template media { available type }`;
  /** A signed link, valid hours: read with the thread, and for a media message that arrives live. */
  const MEDIA_LINK = 'mediaLink { url }';

  /** Where a message stands, in order: a later status never gives way to an earlier one. */
  const STATUS = {
    RECEIVED: { rank: 0, tick: '', label: 'Received' },
    QUEUED: { rank: 0, tick: '◷', label: 'Queued' },
    SENT: { rank: 1, tick: '✓', label: 'Sent' },
    DELIVERED: { rank: 2, tick: '✓✓', label: 'Delivered' },
    READ: { rank: 3, tick: '✓✓', label: 'Read' },
    FAILED: { rank: 4, tick: '!', label: 'Failed' },
  };

  const $ = (id) => document.getElementById(id);
  const el = (tag, attrs = {}, ...children) => {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs)) {
      if (value === null || value === undefined || value === false) continue;
      if (name === 'text') node.textContent = value;
      else node.setAttribute(name, value === true ? '' : value);
    }
    node.append(...children.filter((c) => c !== null && c !== undefined));
    return node;
  };

  const state = {
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
  };

  // --- keys ---------------------------------------------------------------------------------

  function loadKeys() {
    try {
      state.keys.read = localStorage.getItem(STORE.read) ?? '';
      state.keys.write = localStorage.getItem(STORE.write) ?? '';
    } catch {}
  }

  function saveKeys() {
    try {
      localStorage.setItem(STORE.read, state.keys.read);
      if (state.keys.write) localStorage.setItem(STORE.write, state.keys.write);
      else localStorage.removeItem(STORE.write);
    } catch {}
  }

  /** A pasted key may come as the header value it is used in. */
  const cleanKey = (v) => v.trim().replace(/^Bearer\s+/i, '');

  function showKeys(show) {
    $('keys').hidden = !show;
    $('keys-button').setAttribute('aria-expanded', String(show));
    if (show) {
      $('read-key').value = state.keys.read;
      $('write-key').value = state.keys.write;
      $('read-key').focus();
    }
  }

  function notice(text) {
    $('notice').textContent = text ?? '';
    $('notice').hidden = !text;
  }

  function setLive(kind, text) {
    $('live').dataset.state = kind;
    $('live').textContent = text;
  }

  // --- the API --------------------------------------------------------------------------------

  class ApiError extends Error {
    constructor(message, code) {
      super(message);
      this.code = code;
    }
  }

  async function gql(query, variables, key) {
    let response;
    try {
      response = await fetch(http, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ query, variables }),
      });
    } catch {
      throw new ApiError('The service did not answer: check that it runs, then try again.', 'network');
    }
    let body;
    try {
      body = await response.json();
    } catch {
      throw new ApiError(`The service answered HTTP ${response.status}, not GraphQL.`, 'http');
    }
    const error = body.errors?.[0];
    if (error) throw new ApiError(error.message, error.extensions?.code ?? 'error');
    return body.data;
  }

  /** What to tell the person about a refused reading key, or null when the error is another. */
  function readKeyProblem(e) {
    if (e.code === 'unauthenticated')
      return 'The reading key was refused: it is unknown, mistyped or revoked. Paste a current chat:read key.';
    if (e.code === 'forbidden')
      return 'The reading key has no chat:read scope (a chat:write key goes in the second field). Paste a chat:read key.';
    return null;
  }

  // --- the live connection -------------------------------------------------------------------

  function connect() {
    state.client?.dispose();
    state.keyWorked = false;
    let connectedBefore = false;
    const client = graphqlWs.createClient({
      url: ws,
      connectionParams: { Authorization: `Bearer ${state.keys.read}` },
      retryAttempts: Number.POSITIVE_INFINITY,
      // A refused key (4403) stays refused: said at once rather than retried.
      shouldRetry: (e) => !(e && e.code === 4403),
      retryWait: (retries) => new Promise((r) => setTimeout(r, Math.min(10_000, 500 * 2 ** retries))),
      on: {
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
      },
    });
    state.client = client;
  }

  function subscribe(query, variables, onData) {
    if (!state.client) return null;
    return state.client.subscribe(
      { query, variables },
      {
        next: (result) => {
          if (result.errors?.length) return failed(result.errors[0]);
          onData(result.data);
        },
        error: failed,
        complete: () => {},
      },
    );
  }

  /** A subscription ended by the server: a refused or revoked key, or an error of the operation. */
  function failed(e) {
    if (e && typeof e.code === 'number') {
      if (e.code === 4403) {
        // The reason is REST's refusal, `code: message` (src/server/close-reason.ts).
        const [, code, message] = /^(\w+): (.*)$/s.exec(e.reason ?? '') ?? [];
        stop(
          code === 'unauthenticated' && state.keyWorked
            ? 'The reading key was revoked: the inbox stopped updating. Paste a current chat:read key.'
            : code === 'forbidden'
              ? `The reading key lost a scope: ${message} The inbox stopped updating; paste a current chat:read key.`
              : `The server refused the reading key on the live connection: ${message ?? e.reason ?? 'Forbidden'}`,
        );
        return;
      }
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
    clearInbox();
    notice(why);
    showKeys(true);
  }

  function clearInbox() {
    state.conversations.clear();
    state.conversationsCursor = null;
    state.open = null;
    state.messages.clear();
    clearThread();
    renderConversations();
    $('list-empty').hidden = true;
  }

  function clearThread() {
    $('messages').replaceChildren();
    $('thread-title').textContent = 'Choose a conversation';
    $('thread-meta').textContent = '';
    $('reply').hidden = true;
    $('earlier').hidden = true;
  }

  /** The conversation the address names; a malformed one (`#%E0`) names none rather than throw. */
  function hashConversation() {
    try {
      return decodeURIComponent(location.hash.slice(1)) || null;
    } catch {
      return null;
    }
  }

  // --- the conversation list -----------------------------------------------------------------

  const newer = (a, b) => (a ?? '') >= (b ?? '');
  const idNumber = (id) => Number(String(id).replace(/^\D+/, '')) || 0;

  function putConversation(c) {
    const had = state.conversations.get(c.id);
    if (had && !newer(c.updatedAt, had.updatedAt)) return;
    state.conversations.set(c.id, c);
  }

  function conversationName(c) {
    if (c.displayName) return c.displayName;
    const names = (c.patients ?? []).map((p) => [p.firstName, p.lastName].filter(Boolean).join(' '));
    return names.filter(Boolean).join(', ') || c.patientPhone || c.id;
  }

  const waiting = (c) => c.lastInboundAt && (!c.lastOutboundAt || c.lastInboundAt > c.lastOutboundAt);

  const timeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'short', timeStyle: 'short' });
  const when = (iso) => (iso ? el('time', { datetime: iso, text: timeFormat.format(new Date(iso)) }) : null);

  function renderConversations() {
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
            el('span', { class: 'name', text: conversationName(c) }),
            when(c.lastActivityAt),
            c.lastMessagePreview === null
              ? el('span', { class: 'preview no-text', text: 'Media or a sticker, no text' })
              : el('span', { class: 'preview', text: c.lastMessagePreview }),
            needsReply ? el('span', { class: 'badge', text: 'awaits a reply' }) : null,
          ),
        );
      }),
    );
    $('list-empty').hidden = sorted.length > 0;
    $('more-conversations').hidden = !state.conversationsCursor;
    if (focused) list.querySelector(`a[data-id="${CSS.escape(focused)}"]`)?.focus({ preventScroll: true });
  }

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

  // --- the open conversation -----------------------------------------------------------------

  function putMessage(m) {
    if (m.conversationId !== state.open) return false;
    const had = state.messages.get(m.id);
    if (had) {
      const rank = (x) => STATUS[x.status]?.rank ?? 0;
      if (rank(m) < rank(had) || (rank(m) === rank(had) && !newer(m.updatedAt, had.updatedAt))) return false;
    }
    state.messages.set(m.id, m.mediaLink || !had?.mediaLink ? m : { ...m, mediaLink: had.mediaLink });
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

  function messageItem(m) {
    const status = STATUS[m.status] ?? { tick: '', label: m.status };
    const kind = (m.media?.type ?? 'media').toLowerCase();
    const media = !m.media?.available
      ? null
      : m.mediaLink?.url
        ? el('a', {
            class: 'media',
            href: m.mediaLink.url,
            target: '_blank',
            rel: 'noopener noreferrer',
            text: `[${kind}]`,
          })
        : el('span', { class: 'media', text: `[${kind}]` });
    const text = m.text ?? (media ? null : `[${m.type.toLowerCase()}]`);
    return el(
      'li',
      {
        id: `m-${m.id}`,
        class: `message ${m.direction === 'OUTBOUND' ? 'out' : 'in'}`,
        'data-status': m.status,
      },
      el('p', { class: 'body' }, media, media && text ? ' ' : null, text),
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
  function renderMessages() {
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

  function renderThreadHeader() {
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
    state.stopThread = subscribe(
      `subscription InboxThread($id: ID!) { conversationMessages(conversationId: $id) { ${MESSAGE} } }`,
      { id },
      (data) => {
        if (putMessage(data.conversationMessages)) renderMessages();
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
    for (const { node } of c.messages.edges) putMessage(node);
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

  // --- replying -------------------------------------------------------------------------------

  const randomKey = () =>
    [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('');

  async function reply(event) {
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

  // --- start ----------------------------------------------------------------------------------

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
    state.stopList = subscribe(
      `subscription InboxList { conversationsChanged { ${CONVERSATION} } }`,
      {},
      (data) => {
        putConversation(data.conversationsChanged);
        renderConversations();
        if (data.conversationsChanged.id === state.open) renderThreadHeader();
      },
    );
    state.open = null;
    await openConversation(hashConversation());
  }

  document.addEventListener('DOMContentLoaded', () => {
    $('keys-form').addEventListener('submit', (event) => {
      event.preventDefault();
      state.keys.read = cleanKey($('read-key').value);
      state.keys.write = cleanKey($('write-key').value);
      saveKeys();
      // The keys form goes away: the focus goes where the work is, not back to the page's top.
      start().then(() => {
        if ($('keys').hidden) ($('conversations').querySelector('a') ?? $('thread')).focus();
      });
    });
    $('forget').addEventListener('click', () => {
      try {
        localStorage.removeItem(STORE.read);
        localStorage.removeItem(STORE.write);
      } catch {}
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
    loadKeys();
    if (state.keys.read) start();
    else showKeys(true);
  });
})();
