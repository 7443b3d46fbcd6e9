import { posix } from 'node:path';
import type { MarkdownIt, StateCore } from 'markdown-it';
import { ERROR_REFERENCE_PATH } from '../lib/error-docs.ts';
import { escapeHtml, renderPage } from './page-layout.ts';

/**
 * A document of docs/ as a page of the service: the error reference at /errors and the others at
 * /docs/<name> (src/server/error-reference.ts, doc-pages.ts), rendered with markdown-it. Raw HTML
 * in the source is escaped (markdown-it's default), headings get GitHub's ids so the documents'
 * links to each other's sections (`events.md#sample-events`) land, and those links go to the
 * documents' pages; a link to a file the service does not serve is named by its place in the
 * repository instead of a link that would answer 404.
 */
export interface MarkdownPage {
  markdown: string;
  /** The page's title (its tab); the document's own heading stays its h1. */
  title: string;
  /** The names of the documents served under /docs/ (`events` for docs/events.md). */
  served: ReadonlySet<string>;
  /** Changes the token stream before it is rendered (the reference's error-code anchors). */
  rule?: (md: MarkdownIt) => void;
  /** HTML put after the document (escaped by whoever built it). */
  after?: string;
}

/** Where a document's page is: /errors for errors.md, /docs/<name> for the others. */
export const docPath = (name: string) => (name === 'errors' ? ERROR_REFERENCE_PATH : `/docs/${name}`);

export async function renderMarkdownPage(page: MarkdownPage): Promise<string> {
  // Loaded on the first visit: most processes never serve a document.
  const { default: Markdown } = await import('markdown-it');
  const md = new Markdown({ html: false, linkify: false, typographer: false });
  md.core.ruler.push('heading_ids', headingIds);
  page.rule?.(md);
  md.renderer.rules.link_open = (tokens, idx, options, _env, self) => {
    const token = tokens[idx];
    const href = String(token.attrGet('href') ?? '');
    // Another site, this page's own sections, or a path of this service.
    if (/^(https?:|mailto:|#|\/)/.test(href)) return self.renderToken(tokens, idx, options);
    const doc = /^([\w-]+)\.md(#[\w-]*)?$/.exec(href);
    if (doc && page.served.has(doc[1])) {
      token.attrSet('href', `${docPath(doc[1])}${doc[2] ?? ''}`);
      return self.renderToken(tokens, idx, options);
    }
    // Relative to docs/ in the repository; not a page of the service.
    token.meta = { unserved: true };
    const place = posix.normalize(`docs/${href.replace(/#.*$/, '')}`);
    return `<span class="muted" title="${escapeHtml(place)} in the repository">${doc ? 'docs/' : ''}`;
  };
  md.renderer.rules.link_close = (tokens, idx, options, _env, self) => {
    let depth = 0;
    for (let i = idx - 1; i >= 0; i--) {
      if (tokens[i].type === 'link_close') depth++;
      if (tokens[i].type === 'link_open' && depth-- === 0)
        return tokens[i].meta?.unserved ? '</span>' : self.renderToken(tokens, idx, options);
    }
    return self.renderToken(tokens, idx, options);
  };
  return renderPage({ title: page.title, body: `${md.render(page.markdown)}${page.after ?? ''}` });
}

/** GitHub's heading ids: the text lowercased, punctuation dropped, spaces as hyphens, repeats numbered. */
const headingIds = (state: StateCore): void => {
  const seen = new Map<string, number>();
  const tokens = state.tokens;
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i].type !== 'heading_open') continue;
    const text = (tokens[i + 1].children ?? [])
      .filter((c) => c.type === 'text' || c.type === 'code_inline')
      .map((c) => c.content)
      .join('');
    const base = slugOf(text);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    tokens[i].attrSet('id', n ? `${base}-${n}` : base);
  }
};

export const slugOf = (text: string) =>
  text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

/** A document's first heading, for its title and the lists of documents. */
export const headingOf = (markdown: string, fallback: string) =>
  /^#\s+(.+)$/m.exec(markdown)?.[1].trim() ?? fallback;
