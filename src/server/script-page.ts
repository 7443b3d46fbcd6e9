import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '../lib/errors.ts';
import { unframeable } from '../lib/page-headers.ts';
import { suggestionFor } from '../rest/route-suggestion.ts';
import { type Assets, builtOnce, sendAsset } from './hashed-assets.ts';
import { sendError } from './send-error.ts';

/**
 * A page of the service that runs a script of its own (the live inbox, the webhook portal): the
 * page at `path`, revalidated on each visit, and its files under `assets`, hashed and cached for
 * good (src/server/hashed-assets.ts). Its Content Security Policy allows only this origin: no
 * inline script or style, nothing from another host, so the page works offline and an injected
 * tag runs nothing.
 */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  // 'self' covers ws:// and wss:// to this host in Chromium, Firefox and Safari (CSP 3).
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

export interface ScriptPageFiles {
  page: string;
  assets: Assets;
}

export type ServePage = (req: IncomingMessage, res: ServerResponse, path: string) => Promise<void> | null;

/** Answers GET or HEAD of `path` or one of its assets; null for any other path. */
export function scriptPage(
  path: string,
  assetsPrefix: string,
  build: () => Promise<ScriptPageFiles>,
): ServePage {
  const files = builtOnce(build);
  return (req, res, requested) => {
    if (requested !== path && requested !== `${path}/` && !requested.startsWith(assetsPrefix)) return null;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      // POST /webhooks is most often the API's /v1/webhooks with the prefix forgotten: say so.
      const err = new AppError(
        'method_not_allowed',
        `${req.method} is not allowed on ${requested}; use GET, HEAD.${requested.startsWith(assetsPrefix) ? '' : suggestionFor(requested)}`,
      );
      sendError(res, err, { allow: 'GET, HEAD' });
      return Promise.resolve();
    }
    return files().then(({ page, assets }) => {
      if (requested.startsWith(assetsPrefix))
        return sendAsset(req, res, assets.get(requested.slice(assetsPrefix.length)));
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'content-length': Buffer.byteLength(page),
        'cache-control': 'no-cache',
        ...unframeable(CSP),
        'referrer-policy': 'no-referrer',
      });
      res.end(req.method === 'HEAD' ? undefined : page);
    });
  };
}
