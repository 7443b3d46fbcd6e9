import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ERROR_REFERENCE_PATH } from '../lib/error-docs.ts';
import { errorStatuses, isErrorCode } from '../lib/errors.ts';
import { escapeHtml, renderPage, sendPage } from './page-layout.ts';

/**
 * The error reference at /errors: docs/errors.md, the one text that explains the codes, rendered
 * with markdown-it on the first visit (no second copy to drift from it). Each row of its table
 * whose cell is an error code gets that code as its id, so `doc_url` (`/errors#validation_failed`)
 * lands on it and the browser marks the row.
 */
/** Where the reference is read from: the checkout's docs/errors.md. */
export const ERROR_REFERENCE_SOURCE = new URL('../../docs/errors.md', import.meta.url);

/**
 * The page's handler, reading `source` (ERROR_REFERENCE_SOURCE unless a test names another) on
 * the first visit. Without that file it renders every code's row from the error table: /errors
 * never answers 500, since every error body's doc_url points here.
 */
export function createErrorReference(source: URL = ERROR_REFERENCE_SOURCE) {
  let rendered: Promise<string> | undefined;
  return function serveErrorReference(req: IncomingMessage, res: ServerResponse): Promise<void> {
    rendered ??= readFile(source, 'utf8')
      .catch(() => bareReference())
      .then(renderReference)
      .catch((e) => {
        rendered = undefined;
        throw e;
      });
    return rendered.then((html) => sendPage(req, res, html));
  };
}

/** The codes and their HTTP statuses alone, for when docs/errors.md is not there. */
export function bareReference(): string {
  const rows = Object.entries(errorStatuses).map(([code, status]) => `| ${status} | ${code} |`);
  return ['# Errors', '', '| HTTP status | code |', '|---|---|', ...rows, ''].join('\n');
}

/** The page's HTML (exported for tests that read it without a server). */
export async function renderReference(markdown: string): Promise<string> {
  // Loaded on the first visit: most processes never serve this page.
  const { default: MarkdownIt } = await import('markdown-it');
  // html: false, the default: markdown-it escapes any HTML in the source.
  const md = new MarkdownIt({ html: false, linkify: false, typographer: false });
  md.core.ruler.push('error_code_anchors', (state) => {
    const tokens = state.tokens;
    let row = -1;
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i];
      if (t.type === 'tr_open') row = i;
      if (t.type !== 'inline' || row < 0 || tokens[i - 1]?.type !== 'td_open') continue;
      const code = t.content.trim();
      if (!isErrorCode(code) || tokens[row].attrGet('id')) continue;
      tokens[row].attrSet('id', code);
      // The code links to itself: a reader copies the address of the row they mean.
      const open = new state.Token('link_open', 'a', 1);
      open.attrSet('href', `#${code}`);
      const text = new state.Token('code_inline', 'code', 0);
      text.content = code;
      t.children = [open, text, new state.Token('link_close', 'a', -1)];
    }
  });
  // The other documents it points to (limits.md, decisions.md) are not served: named by their
  // place in the repository instead of a link that would answer 404.
  md.renderer.rules.link_open = (tokens, idx, options, _env, self) => {
    const href = String(tokens[idx].attrGet('href') ?? '');
    const sibling = /^([\w-]+\.md)(#.*)?$/.exec(href);
    if (!sibling) return self.renderToken(tokens, idx, options);
    tokens[idx].meta = { sibling: true };
    return `<span class="muted" title="docs/${escapeHtml(sibling[1])} in the repository">docs/`;
  };
  md.renderer.rules.link_close = (tokens, idx, options, _env, self) => {
    let depth = 0;
    for (let i = idx - 1; i >= 0; i--) {
      if (tokens[i].type === 'link_close') depth++;
      if (tokens[i].type === 'link_open' && depth-- === 0)
        return tokens[i].meta?.sibling ? '</span>' : self.renderToken(tokens, idx, options);
    }
    return self.renderToken(tokens, idx, options);
  };
  const body = md.render(markdown);
  return renderPage({
    title: 'Errors · clinic-gateway',
    body: `${body}<p class="muted">Every error answer names its row here: <code>doc_url</code> in REST's <code>error</code> object and in GraphQL's <code>extensions</code>, a path such as <code>${ERROR_REFERENCE_PATH}#validation_failed</code>.</p>`,
  });
}
