import { readdir, readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ERROR_REFERENCE_PATH } from '../lib/error-docs.ts';
import { AppError } from '../lib/errors.ts';
import { docPath, headingOf, renderMarkdownPage } from './markdown-page.ts';
import { escapeHtml, renderPage, sendPage } from './page-layout.ts';
import { sendError } from './send-error.ts';

/**
 * The documents of docs/ as pages: /docs lists them, /docs/<name> renders docs/<name>.md the way
 * /errors renders docs/errors.md (markdown-page.ts), each on its first visit. Only a name of a
 * document in that folder is served, and only as the exact name (letters, digits, hyphens): no
 * other file, no path of another folder (`..`, an encoded slash) reaches the disk. Anything else
 * under /docs/ is the JSON 404 of every unknown path; /docs/errors is /errors.
 */
export const DOCS_DIR = new URL('../../docs/', import.meta.url);

const NAME = /^[a-z0-9][a-z0-9-]*$/;

export interface Document {
  name: string;
  /** Its first heading. */
  title: string;
}

export function createDocPages(dir: URL = DOCS_DIR) {
  let listing: Promise<Map<string, Document>> | undefined;
  const pages = new Map<string, Promise<string>>();

  /** The documents, read once; none when the folder is not there (an installation without docs/). */
  function documents(): Promise<Map<string, Document>> {
    listing ??= readdir(dir)
      .then(async (files) => {
        const names = files
          .filter((f) => f.endsWith('.md'))
          .map((f) => f.slice(0, -3))
          .filter((n) => NAME.test(n))
          .sort();
        const docs = new Map<string, Document>();
        for (const name of names)
          docs.set(name, {
            name,
            title: headingOf(await readFile(new URL(`${name}.md`, dir), 'utf8'), name),
          });
        return docs;
      })
      .catch(() => new Map());
    return listing;
  }

  const served = async (): Promise<ReadonlySet<string>> => new Set((await documents()).keys());

  function page(doc: Document): Promise<string> {
    let html = pages.get(doc.name);
    if (!html) {
      html = Promise.all([readFile(new URL(`${doc.name}.md`, dir), 'utf8'), served()]).then(
        ([markdown, names]) =>
          renderMarkdownPage({ markdown, title: `${doc.title} · clinic-gateway`, served: names }),
      );
      // A failed read is tried again on the next visit.
      html.catch(() => pages.delete(doc.name));
      pages.set(doc.name, html);
    }
    return html;
  }

  /** GET or HEAD of /docs or /docs/…. */
  async function serve(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const docs = await documents();
    const name = path.replace(/^\/docs\/?/, '');
    if (name === '')
      return sendPage(req, res, renderPage({ title: 'Documentation · clinic-gateway', body: indexOf(docs) }));
    if (name === 'errors' && docs.has(name)) {
      res.writeHead(301, { location: ERROR_REFERENCE_PATH, 'content-length': '0' });
      return void res.end();
    }
    const doc = NAME.test(name) ? docs.get(name) : undefined;
    if (!doc)
      return sendError(
        res,
        new AppError('not_found', `No document ${path}. The documents are listed at /docs.`),
      );
    return sendPage(req, res, await page(doc));
  }

  return { serve, documents, served };
}

/** The documents as a list of links (the /docs page; the landing page lists them too). */
export function documentLinks(docs: Iterable<Document>): string {
  return [...docs]
    .map(
      (d) =>
        `<li><a href="${escapeHtml(docPath(d.name))}">${escapeHtml(d.title)}</a><p><code>docs/${escapeHtml(d.name)}.md</code></p></li>`,
    )
    .join('\n');
}

function indexOf(docs: Map<string, Document>): string {
  return `<h1>Documentation</h1>
<p class="lead">The documents of the repository's <code>docs/</code> folder, as this service serves them.</p>
<ul class="links">
${documentLinks(docs.values())}
</ul>`;
}
