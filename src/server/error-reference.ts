import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { StateCore } from 'markdown-it';
import { ERROR_REFERENCE_PATH } from '../lib/error-docs.ts';
import { errorStatuses, isErrorCode } from '../lib/errors.ts';
import { renderMarkdownPage } from './markdown-page.ts';
import { sendPage } from './page-layout.ts';

/**
 * The error reference at /errors: docs/errors.md, the one text that explains the codes, rendered
 * with markdown-it on the first visit (no second copy to drift from it). Each row of its table
 * whose cell is an error code gets that code as its id, so `doc_url` (`/errors#validation_failed`)
 * lands on it and the browser marks the row. The rendering is every document's (markdown-page.ts).
 */
/** Where the reference is read from: the checkout's docs/errors.md. */
export const ERROR_REFERENCE_SOURCE = new URL('../../docs/errors.md', import.meta.url);

/**
 * The page's handler, reading `source` (ERROR_REFERENCE_SOURCE unless a test names another) on
 * the first visit. Without that file it renders every code's row from the error table: /errors
 * never answers 500, since every error body's doc_url points here. `served`: the documents of
 * /docs/, which its links to them go to.
 */
export function createErrorReference(
  source: URL = ERROR_REFERENCE_SOURCE,
  served: () => Promise<ReadonlySet<string>> = async () => new Set(),
) {
  let rendered: Promise<string> | undefined;
  return function serveErrorReference(req: IncomingMessage, res: ServerResponse): Promise<void> {
    rendered ??= Promise.all([readFile(source, 'utf8').catch(() => bareReference()), served()])
      .then(([markdown, docs]) => renderReference(markdown, docs))
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
export function renderReference(markdown: string, served: ReadonlySet<string> = new Set()): Promise<string> {
  return renderMarkdownPage({
    markdown,
    title: 'Errors · clinic-gateway',
    served,
    rule: (md) => md.core.ruler.push('error_code_anchors', errorCodeAnchors),
    after: `<p class="muted">Every error answer names its row here: <code>doc_url</code> in REST's <code>error</code> object and in GraphQL's <code>extensions</code>, ending <code>${ERROR_REFERENCE_PATH}#validation_failed</code> (absolute where the deployment sets <code>PUBLIC_URL</code>).</p>`,
  });
}

/** Each table row whose cell is an error code gets the code as its id, and the code a link to itself. */
const errorCodeAnchors = (state: StateCore): void => {
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
};
