import { readFile } from 'node:fs/promises';
import { type Assets, addAsset, CSS, graphqlWsBrowserBuild, JS } from '../hashed-assets.ts';
import { addModules } from '../hashed-modules.ts';
import { scriptPage } from '../script-page.ts';

/**
 * The live inbox at /inbox (docs/chat.md, The live inbox): a page for a person with a `chat:read`
 * key, and a `chat:write` key to reply. It is a client of the public API and nothing more: the
 * queries over POST /graphql, the live part over graphql-ws (`conversationsChanged`,
 * `conversationMessages`), replies with `sendMessage`. So the page needs no key to load, holds no
 * data of its own, and shows exactly what an integrator's client would see.
 *
 * Its stylesheet, graphql-ws's browser build and its script, ES modules by concern from inbox.js
 * down (src/server/hashed-modules.ts), are hashed files cached for good
 * (src/server/hashed-assets.ts, the console's mechanism); the page is revalidated. Its Content
 * Security Policy allows only this origin (src/server/script-page.ts).
 */
export const INBOX_PATH = '/inbox';
export const INBOX_ASSETS = '/inbox/assets/';

/** Answers GET or HEAD of /inbox or one of its assets; null for any other request. */
export const serveInbox = scriptPage(INBOX_PATH, INBOX_ASSETS, async () => {
  const assets: Assets = new Map();
  const here = (name: string) => readFile(new URL(`./${name}`, import.meta.url));
  const [base, own, graphqlWs, modules] = await Promise.all([
    addAsset(assets, INBOX_ASSETS, 'page-base', 'css', CSS, await here('page-base.css')),
    addAsset(assets, INBOX_ASSETS, 'inbox', 'css', CSS, await here('inbox.css')),
    addAsset(assets, INBOX_ASSETS, 'graphql-ws', 'js', JS, await graphqlWsBrowserBuild()),
    addModules(assets, INBOX_ASSETS, async (file) => String(await here(file)), 'inbox'),
  ]);
  return { page: pageHtml({ css: [base, own], graphqlWs, modules }), assets };
});

function pageHtml(files: { css: string[]; graphqlWs: string; modules: string[] }): string {
  // The entry comes last; the others are fetched at once rather than as each import is found.
  const preloads = files.modules.slice(0, -1).map((url) => `<link rel="modulepreload" href="${url}">\n`);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Inbox · clinic-gateway</title>
<link rel="icon" href="data:,">
${files.css.map((url) => `<link rel="stylesheet" href="${url}">\n`).join('')}${preloads.join('')}<script defer src="${files.graphqlWs}"></script>
<script type="module" src="${files.modules.at(-1)}"></script>
</head>
<body>
<a class="skip" href="#thread">Skip to the conversation</a>
<header class="top">
  <h1>Inbox</h1>
  <p id="live" class="live" role="status" data-state="idle">Not connected</p>
  <button type="button" id="keys-button" aria-controls="keys" aria-expanded="false">Keys</button>
</header>
<div id="notice" class="notice" role="alert" hidden></div>
<section id="keys" class="keys" aria-labelledby="keys-title" hidden>
  <h2 id="keys-title">Your API keys</h2>
  <p>The inbox reads with a <code>chat:read</code> key and replies with a <code>chat:write</code> key
  (a key never has both). <code>npm start</code> prints demo keys. They are kept in this browser
  only (its local storage, which this service's other pages share) and sent to this service
  alone, until “Forget the keys” removes both.</p>
  <form id="keys-form">
    <p><label for="read-key">Reading key (<code>chat:read</code>), required</label>
    <input id="read-key" name="read" type="password" autocomplete="off" spellcheck="false" required></p>
    <p><label for="write-key">Replying key (<code>chat:write</code>), optional</label>
    <input id="write-key" name="write" type="password" autocomplete="off" spellcheck="false"></p>
    <p class="actions"><button type="submit">Open the inbox</button>
    <button type="button" id="forget">Forget the keys</button></p>
  </form>
</section>
<main class="inbox">
  <nav class="list" aria-labelledby="list-title">
    <h2 id="list-title">Conversations</h2>
    <ul id="conversations"></ul>
    <p id="list-empty" class="empty" hidden>No conversations yet.</p>
    <button type="button" id="more-conversations" class="more" hidden>More conversations</button>
  </nav>
  <section id="thread" class="thread" aria-labelledby="thread-title" tabindex="-1">
    <h2 id="thread-title" dir="auto">Choose a conversation</h2>
    <p id="thread-meta" class="meta"></p>
    <button type="button" id="earlier" class="more" hidden>Earlier messages</button>
    <ol id="messages" class="messages" role="log" aria-labelledby="thread-title"></ol>
    <form id="reply" class="reply" hidden>
      <label for="reply-text" id="reply-label">Reply</label>
      <div class="reply-row">
        <textarea id="reply-text" dir="auto" rows="2" maxlength="4096" required aria-describedby="reply-hint"></textarea>
        <button type="submit" id="reply-send">Send</button>
      </div>
      <p id="reply-hint" class="hint"></p>
      <p id="reply-error" class="error" role="alert"></p>
    </form>
  </section>
</main>
<noscript><p class="notice">The inbox needs JavaScript: it is a live view over a websocket.</p></noscript>
</body>
</html>
`;
}
