import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '../lib/errors.ts';
import { currentRequestId } from '../lib/request-context.ts';
import { FALLBACK_DOCUMENT_NAME } from '../media/filename.ts';
import { contentDisposition, verifyMediaToken } from '../media/links.ts';
import { servedType } from '../media/served-type.ts';
import type { MediaStore } from '../media/store.ts';
import { errorBody } from '../rest/errors.ts';

/**
 * Every media answer, the file or its error: no script runs in it and no plugin loads from it
 * even when a browser renders it on the API's origin (where the inbox keeps its keys), and the
 * browser takes the type given, never one it guesses.
 */
const MEDIA_HEADERS = {
  'content-security-policy': "sandbox; default-src 'none'",
  'x-content-type-options': 'nosniff',
} as const;

/**
 * Answers `GET`/`HEAD /media/<token>`: 200 with the bytes (raster images inline, anything else
 * as an attachment; src/media/served-type.ts), or a JSON 404 `not_found` for a link that is
 * altered, expired or points at nothing, all alike. A store that fails rejects the returned
 * promise: the caller's error mapping answers (503 when the database is away).
 */
export async function serveMedia(
  req: IncomingMessage,
  res: ServerResponse,
  deps: { secret: string; store: MediaStore; clock: { now(): Date } },
): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    return sendError(
      res,
      new AppError('method_not_allowed', `${req.method} is not allowed on /media links; use GET or HEAD.`),
      { allow: 'GET, HEAD' },
    );
  }
  const now = deps.clock.now();
  const m = /^\/media\/([^/]+)$/.exec(path);
  const link = m ? verifyMediaToken(deps.secret, m[1], now) : null;
  const object = link ? await deps.store.get(link.clinicId, link.key) : null;
  if (!link || !object) {
    return sendError(
      res,
      new AppError(
        'not_found',
        'No media at this link: it is unknown, altered or expired. Links last about 10 hours; ask for a new one.',
      ),
    );
  }
  const secondsLeft = Math.max(0, Math.floor((link.expiresAt.getTime() - now.getTime()) / 1000));
  const served = await servedType(object.bytes, object.mime);
  const name = link.filename ?? (served.mime === 'application/pdf' ? FALLBACK_DOCUMENT_NAME : null);
  res.writeHead(200, {
    'content-type': served.mime,
    'content-length': String(object.bytes.length),
    'content-disposition': contentDisposition(served.inline ? 'inline' : 'attachment', name),
    'cache-control': `private, max-age=${secondsLeft}`,
    ...MEDIA_HEADERS,
  });
  res.end(req.method === 'HEAD' ? undefined : object.bytes);
}

function sendError(res: ServerResponse, err: AppError, headers: Record<string, string> = {}) {
  const body = JSON.stringify(errorBody(err, currentRequestId()));
  res.writeHead(err.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    'cache-control': 'no-store',
    ...MEDIA_HEADERS,
    ...headers,
  });
  res.end(body);
}
