import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { AppError } from '../lib/errors.ts';
import { sendError } from './send-error.ts';

/**
 * The files of the service's pages (the GraphQL console, the live inbox): each named by a hash
 * of its content and cached by the browser for a year (`immutable`), so a new version brings new
 * names and a page (revalidated, `no-cache`) sees it at once. Everything comes from the checkout
 * and the installed packages: no CDN, the pages work offline.
 */
export const IMMUTABLE = 'public, max-age=31536000, immutable';

export interface Asset {
  type: string;
  body: Buffer;
  /** The same bytes gzipped, made once (GraphiQL's script is 5 MB, 1.4 MB gzipped). */
  gzipped: Buffer;
}

export type Assets = Map<string, Asset>;

export const JS = 'text/javascript; charset=utf-8';
export const CSS = 'text/css; charset=utf-8';

/** Adds `content` to `assets` under `<stem>.<hash>.<ext>`; answers the URL it is served at. */
export async function addAsset(
  assets: Assets,
  prefix: string,
  stem: string,
  ext: string,
  type: string,
  content: string | Buffer,
): Promise<string> {
  const body = typeof content === 'string' ? Buffer.from(content) : content;
  const name = `${stem}.${createHash('sha256').update(body).digest('hex').slice(0, 16)}.${ext}`;
  assets.set(name, { type, body, gzipped: await promisify(gzip)(body) });
  return `${prefix}${name}`;
}

/** Answers a GET or HEAD for one asset (gzipped when the browser takes it), or the JSON 404. */
export function sendAsset(req: IncomingMessage, res: ServerResponse, asset: Asset | undefined): void {
  if (!asset) {
    // An old page asking for files of a version since replaced gets this too.
    sendError(
      res,
      new AppError('not_found', `No asset ${req.url?.split('?')[0]}: its page names the current ones.`),
    );
    return;
  }
  const gzipped = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
  const body = gzipped ? asset.gzipped : asset.body;
  res.writeHead(200, {
    'content-type': asset.type,
    'content-length': body.length,
    'cache-control': IMMUTABLE,
    vary: 'accept-encoding',
    ...(gzipped ? { 'content-encoding': 'gzip' } : {}),
  });
  res.end(body);
}

/** graphql-ws's browser build (the global `graphqlWs`), from the installed package. */
export function graphqlWsBrowserBuild(): Promise<Buffer> {
  // The package exports no path to its browser build: it is found beside the entry point.
  const entry = pathToFileURL(createRequire(import.meta.url).resolve('graphql-ws'));
  return readFile(new URL('../umd/graphql-ws.min.js', entry));
}

/** `build` run once, when first needed; a failure is tried again on the next call. */
export function builtOnce<T>(build: () => Promise<T>): () => Promise<T> {
  let built: Promise<T> | undefined;
  return () => {
    built ??= build().catch((e) => {
      built = undefined;
      throw e;
    });
    return built;
  };
}
