import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { unframeable } from '../lib/page-headers.ts';
import {
  type Assets,
  addAsset,
  builtOnce,
  CSS,
  graphqlWsBrowserBuild,
  JS,
  sendAsset,
} from './hashed-assets.ts';

/**
 * The GraphQL console at /graphql: GraphiQL as `@graphql-yoga/render-graphiql` ships it (React,
 * GraphiQL, Monaco and its workers, prebuilt into strings), but served as files instead of one
 * 9 MB page: hashed, cached for a year (src/server/hashed-assets.ts). The page itself is about
 * 2 KB and revalidated (`no-cache`), so a deploy is seen at once. Everything comes from the
 * installed package: no CDN, the console works offline.
 *
 * GraphiQL runs with our fetcher (graphiql-fetcher.js, on graphql-ws's browser build from the
 * installed graphql-ws): subscriptions go over graphql-ws with the Headers editor's key in
 * `connection_init`, which Yoga's fetcher cannot do (that file says why).
 */
export const CONSOLE_ASSETS = '/graphql/assets/';

interface Console {
  page: string;
  assets: Assets;
}

/** The headers editor's start: JSONC, so the example stays a comment until the user edits it. */
const HEADERS_TEMPLATE = `{
  // Paste your API key (npm start prints demo keys) and remove the slashes:
  // "Authorization": "Bearer cg_test_..."
}`;

const HINT =
  'The schema (Docs, autocompletion) loads without a key. To run operations, put your API key in ' +
  '<b>Headers</b> as <code>{"Authorization": "Bearer &lt;key&gt;"}</code>: headers are kept in this ' +
  'browser (GraphiQL settings turn that off).';

/**
 * Answers a console request (GET or HEAD): the page, for a browser asking for HTML (a `?query=`
 * GraphiQL keeps in its address included), or one of its assets. Null when the request is
 * neither, for the GraphQL handler.
 */
export function serveConsole(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> | null {
  if (req.method !== 'GET' && req.method !== 'HEAD') return null;
  if (path.startsWith(CONSOLE_ASSETS)) return sendConsoleAsset(req, res, path.slice(CONSOLE_ASSETS.length));
  if ((path !== '/graphql' && path !== '/graphql/') || !req.headers.accept?.includes('text/html'))
    return null;
  return consoleFiles().then(({ page }) => {
    res.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'content-length': Buffer.byteLength(page),
      'cache-control': 'no-cache',
      // GraphiQL's own inline scripts and styles stay allowed; only framing is forbidden.
      ...unframeable(),
    });
    res.end(page);
  });
}

async function sendConsoleAsset(req: IncomingMessage, res: ServerResponse, name: string): Promise<void> {
  sendAsset(req, res, (await consoleFiles()).assets.get(name));
}

/**
 * Built once, on the first request for the console: importing the package's 9 MB of strings at
 * start would cost every process about 35 MB it may never use (docs/performance.md).
 */
const consoleFiles = builtOnce(build);

async function build(): Promise<Console> {
  const m = await import('@graphql-yoga/render-graphiql/graphiql');
  const assets: Assets = new Map();
  const add = (stem: string, ext: string, type: string, content: string | Buffer) =>
    addAsset(assets, CONSOLE_ASSETS, stem, ext, type, content);
  const [css, script, graphqlWs, fetcher, editorWorker, jsonWorker, graphqlWorker, favicon] =
    await Promise.all([
      add('graphiql', 'css', CSS, m.css),
      add('graphiql', 'js', JS, m.js),
      add('graphql-ws', 'js', JS, await graphqlWsBrowserBuild()),
      add('graphiql-fetcher', 'js', JS, await readFile(new URL('./graphiql-fetcher.js', import.meta.url))),
      add('editor.worker', 'js', JS, m.editorWorkerService),
      add('json.worker', 'js', JS, m.jsonWorker),
      add('graphql.worker', 'js', JS, m.graphqlWorker),
      add(
        'favicon',
        'ico',
        'image/x-icon',
        Buffer.from(m.favicon.replace(/^data:[^,]*;base64,/, ''), 'base64'),
      ),
    ]);
  const options = {
    title: 'clinic-gateway GraphQL',
    defaultQuery: '{ patients(first: 5) { edges { node { id firstName lastName phone } } } }',
    // A default only: what the user typed, kept in the browser's storage, wins on the next visit.
    headers: HEADERS_TEMPLATE,
    shouldPersistHeaders: true,
  };
  const workers = { editorWorkerService: editorWorker, json: jsonWorker, graphql: graphqlWorker };
  // `<` escaped: nothing in the options can close the script element.
  const json = (v: unknown) => JSON.stringify(v).replace(/</g, '\\u003c');
  const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>clinic-gateway GraphQL (GraphiQL)</title>
<link rel="icon" href="${favicon}">
<link rel="stylesheet" href="${css}">
<style>
body { height: 100vh; display: flex; flex-direction: column; }
#hint { margin: 0; padding: 4px 12px; font: 13px system-ui, sans-serif; background: #f5f5f5; border-bottom: 1px solid #ddd; }
#root { flex: 1; min-height: 0; }
#root .graphiql-container { height: 100%; width: 100%; }
</style>
</head>
<body id="body" class="no-focus-outline">
<noscript>GraphiQL needs JavaScript.</noscript>
<p id="hint">${HINT}</p>
<div id="root"></div>
<script>
const workers = ${json(workers)};
self.MonacoEnvironment = { globalAPI: false, getWorkerUrl: (moduleId, label) => workers[label] };
</script>
<script src="${script}"></script>
<script src="${graphqlWs}"></script>
<script src="${fetcher}"></script>
<script>
const options = ${json(options)};
// With headers kept, GraphiQL 5 opens a new tab on every visit unless the query, variables and
// headers it is given match a kept tab's. It keeps the headers last typed on their own
// (graphiql:headers) and may not have written them into the tab yet: they are put there first,
// and the last active tab is given back whole.
try {
  const headers = localStorage.getItem('graphiql:headers');
  const saved = JSON.parse(localStorage.getItem('graphiql:tabState') || 'null');
  const tab = saved && saved.tabs[saved.activeTabIndex];
  if (tab && tab.query) {
    if (headers) {
      tab.headers = headers;
      localStorage.setItem('graphiql:tabState', JSON.stringify(saved));
    }
    Object.assign(options, { query: tab.query, variables: tab.variables || undefined });
    if (tab.headers) options.initialHeaders = tab.headers;
  }
} catch {}
YogaGraphiQL.renderYogaGraphiQL(document.querySelector('#root'), { ...options, fetcher: graphiqlFetcher('/graphql') });
</script>
</body>
</html>
`;
  return { page, assets };
}
