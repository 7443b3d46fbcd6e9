import { readFile } from 'node:fs/promises';
import { type Assets, addAsset, CSS } from '../hashed-assets.ts';
import { addModules } from '../hashed-modules.ts';
import { scriptPage } from '../script-page.ts';

/**
 * The webhook portal at /webhooks (docs/webhook-portal.md): a clinic's webhook endpoints, their
 * delivery logs and the event catalog, for a person with a `webhooks:manage` key. Like the live
 * inbox (src/server/inbox/page.ts) it is a client of the public API and nothing more: GraphQL over
 * POST /graphql, the event samples from /v1/openapi.json. The page needs no key to load and holds
 * no data of its own.
 *
 * Its stylesheets (the frame, the views) and its script, ES modules by concern from portal.js down, are hashed files
 * cached for good; the page is revalidated; its Content Security Policy allows only this origin
 * (src/server/script-page.ts).
 */
export const PORTAL_PATH = '/webhooks';
export const PORTAL_ASSETS = '/webhooks/assets/';

/** The inbox's files the portal uses as they are (helpers, the pages' shared stylesheet): one copy of each. */
const SHARED = new Set(['dom.js', 'gql.js', 'page-base.css']);

/** Answers GET or HEAD of /webhooks or one of its assets; null for any other request. */
export const servePortal = scriptPage(PORTAL_PATH, PORTAL_ASSETS, async () => {
  const assets: Assets = new Map();
  const read = async (name: string) =>
    String(await readFile(new URL(SHARED.has(name) ? `../inbox/${name}` : `./${name}`, import.meta.url)));
  const [base, frame, views, modules] = await Promise.all([
    addAsset(assets, PORTAL_ASSETS, 'page-base', 'css', CSS, await read('page-base.css')),
    addAsset(assets, PORTAL_ASSETS, 'portal', 'css', CSS, await read('portal.css')),
    addAsset(assets, PORTAL_ASSETS, 'views', 'css', CSS, await read('views.css')),
    addModules(assets, PORTAL_ASSETS, read, 'portal'),
  ]);
  return { page: pageHtml({ css: [base, frame, views], modules }), assets };
});

function pageHtml(files: { css: string[]; modules: string[] }): string {
  // The entry comes last; the others are fetched at once rather than as each import is found.
  const preloads = files.modules.slice(0, -1).map((url) => `<link rel="modulepreload" href="${url}">\n`);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Webhooks · clinic-gateway</title>
<link rel="icon" href="data:,">
${files.css.map((url) => `<link rel="stylesheet" href="${url}">\n`).join('')}${preloads.join('')}<script type="module" src="${files.modules.at(-1)}"></script>
</head>
<body>
<a class="skip" href="#view">Skip to the content</a>
<header class="top">
  <h1><a href="#">Webhooks</a></h1>
  <nav class="site" aria-label="Service"><a href="/">clinic-gateway</a> <a href="#catalog" id="catalog-link">Event catalog</a></nav>
  <p id="live" class="live" role="status" data-state="idle">Not connected</p>
  <button type="button" id="key-button" aria-controls="key" aria-expanded="false">Key</button>
</header>
<div id="notice" class="notice" role="alert" hidden></div>
<section id="key" class="key" aria-labelledby="key-title" hidden>
  <h2 id="key-title">Your API key</h2>
  <p>The portal works with a key that has <code>webhooks:manage</code>; endpoints receiving
  <code>chat.*</code> events also need <code>chat:read</code> on it. <code>npm start</code> prints
  demo keys. The key is kept in this browser only (its local storage, which this service's other
  pages share) and sent to this service alone, until “Forget the key” removes it.</p>
  <form id="key-form">
    <p><label for="key-input">Key with <code>webhooks:manage</code></label>
    <input id="key-input" name="key" type="password" autocomplete="off" spellcheck="false" required></p>
    <p class="actions"><button type="submit">Open the portal</button>
    <button type="button" id="forget">Forget the key</button></p>
  </form>
</section>
<main class="portal">
  <nav class="list" aria-labelledby="list-title">
    <div class="list-head">
      <h2 id="list-title">Endpoints</h2>
      <a class="button" id="add" href="#new">Add an endpoint</a>
    </div>
    <ul id="endpoints"></ul>
    <p id="list-empty" class="empty" hidden>No endpoints yet. Add one to receive events.</p>
    <p id="list-more" class="empty" hidden>Only the first 50 endpoints are listed.</p>
  </nav>
  <section id="view" class="view" aria-labelledby="view-title" tabindex="-1">
    <h2 id="view-title">Choose an endpoint</h2>
    <div id="view-body"></div>
  </section>
</main>
<noscript><p class="notice">The webhook portal needs JavaScript.</p></noscript>
</body>
</html>
`;
}
