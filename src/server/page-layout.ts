import type { IncomingMessage, ServerResponse } from 'node:http';
import { unframeable } from '../lib/page-headers.ts';

/**
 * The frame of the service's own pages (the landing page at `/`, the error reference at `/errors`,
 * the documents at `/docs/<name>`):
 * server-rendered HTML with its style inline, no script, no font or file from elsewhere, so a
 * page works offline and its Content-Security-Policy can forbid everything else.
 */

/** Escapes text for HTML content and quoted attribute values. */
export const escapeHtml = (text: string): string =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );

/** A tooth, drawn inline: a page asks for no favicon the service would answer with a JSON 404. */
const ICON =
  "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 32 32'%3E%3Cpath fill='%230f766e' d='M9 3c-4 0-6 3-6 7 0 5 3 7 4 12 1 4 2 7 4 7s2-4 3-8c.5-2 1-3 2-3s1.5 1 2 3c1 4 1 8 3 8s3-3 4-7c1-5 4-7 4-12 0-4-2-7-6-7-3 0-4 2-7 2S12 3 9 3z'/%3E%3C/svg%3E";

const STYLE = `
:root {
  color-scheme: light dark;
  --text: #1c2024; --muted: #5b6470; --line: #dde1e6; --soft: #f4f6f8;
  --accent: #0f766e; --accent-soft: #e6f4f2; --mark: #fff4c2;
}
@media (prefers-color-scheme: dark) {
  :root {
    --text: #e6e8eb; --muted: #a0a8b3; --line: #30363d; --soft: #161b22;
    --accent: #4fd1c5; --accent-soft: #12302d; --mark: #3d3514;
  }
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body {
  margin: 0; color: var(--text); background: Canvas;
  font: 17px/1.6 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", sans-serif;
  text-rendering: optimizeLegibility;
}
main, header.site, footer.site { max-width: 52rem; margin: 0 auto; padding: 0 1.25rem; }
header.site { display: flex; align-items: baseline; gap: 1rem; padding-top: 1.25rem; padding-bottom: .75rem; border-bottom: 1px solid var(--line); }
header.site a.home { font-weight: 650; color: var(--text); text-decoration: none; letter-spacing: -.01em; white-space: nowrap; }
header.site nav { display: flex; flex-wrap: wrap; gap: .25rem 1rem; font-size: .92rem; }
footer.site { margin-top: 3rem; padding-top: 1rem; padding-bottom: 2rem; border-top: 1px solid var(--line); color: var(--muted); font-size: .88rem; }
h1 { font-size: 2.1rem; line-height: 1.2; letter-spacing: -.02em; margin: 2rem 0 .5rem; }
h2 { font-size: 1.35rem; line-height: 1.3; letter-spacing: -.01em; margin: 2.5rem 0 .75rem; }
h3 { font-size: 1.08rem; margin: 1.75rem 0 .5rem; }
p, ul, ol, table, pre { margin: 0 0 1rem; }
.lead { font-size: 1.15rem; color: var(--muted); max-width: 44rem; }
a { color: var(--accent); text-underline-offset: .15em; }
a:hover { text-decoration-thickness: 2px; }
code, pre { font-family: ui-monospace, "SFMono-Regular", "JetBrains Mono", "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: .86em; }
:not(pre) > code { background: var(--soft); border: 1px solid var(--line); border-radius: 4px; padding: .05em .3em; overflow-wrap: anywhere; }
pre { background: var(--soft); border: 1px solid var(--line); border-radius: 6px; padding: .75rem 1rem; overflow-x: auto; line-height: 1.45; }
table { border-collapse: collapse; width: 100%; font-size: .93rem; }
th, td { text-align: left; vertical-align: top; padding: .5rem .6rem; border-bottom: 1px solid var(--line); }
th { font-weight: 600; color: var(--muted); font-size: .8rem; text-transform: uppercase; letter-spacing: .04em; }
td code { overflow-wrap: normal; }
td:first-child code, td > a > code { white-space: nowrap; }
tr:target, tr:target td { background: var(--mark); }
@media (max-width: 40rem) {
  body { font-size: 16px; }
  h1 { font-size: 1.7rem; }
  header.site { flex-direction: column; gap: .25rem; }
  /* A wide table scrolls on its own; the page does not scroll sideways. */
  table { display: block; overflow-x: auto; }
}
tr[id], h2[id], h3[id], h4[id] { scroll-margin-top: 1rem; }
.links { list-style: none; padding: 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(15rem, 1fr)); gap: .75rem; }
.links li { border: 1px solid var(--line); border-radius: 8px; padding: .8rem 1rem; }
.links a { font-weight: 600; text-decoration: none; }
.links a:hover { text-decoration: underline; }
.links p { margin: .25rem 0 0; color: var(--muted); font-size: .9rem; line-height: 1.45; }
.muted { color: var(--muted); }
.scope { white-space: nowrap; }
`;

export interface PageContent {
  title: string;
  /** The page's own HTML, inside <main>: escaped by whoever built it. */
  body: string;
}

export function renderPage({ title, body }: PageContent): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="${ICON}">
<style>${STYLE}</style>
</head>
<body>
<header class="site">
<a class="home" href="/">clinic-gateway</a>
<nav aria-label="Service">
<a href="/v1/docs">REST docs</a>
<a href="/graphql">GraphQL console</a>
<a href="/inbox">Live inbox</a>
<a href="/webhooks">Webhooks</a>
<a href="/#events">Events</a>
<a href="/errors">Errors</a>
<a href="/docs">Docs</a>
</nav>
</header>
<main>
${body}
</main>
<footer class="site">clinic-gateway · <a href="/health">health</a> · <a href="/ready">readiness</a> · <a href="/v1/openapi.json">openapi.json</a></footer>
</body>
</html>
`;
}

/**
 * Sends a page (GET, or HEAD without its body). It carries no clinical data, so unlike the API's
 * answers it may be kept and revalidated; it runs no script and loads nothing from elsewhere.
 */
export function sendPage(req: IncomingMessage, res: ServerResponse, html: string): void {
  res.writeHead(200, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(html),
    'cache-control': 'no-cache',
    ...unframeable(
      "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'",
    ),
  });
  res.end(req.method === 'HEAD' ? undefined : html);
}
