import { createReadStream } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { unframeable } from '../lib/page-headers.ts';

const require = createRequire(import.meta.url);
/** Swagger UI is served from the installed swagger-ui-dist, so /v1/docs works offline. */
const assetsDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const allowed = new Set([
  'swagger-ui.css',
  'swagger-ui-bundle.js',
  'swagger-ui-standalone-preset.js',
  'favicon-32x32.png',
]);

const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>clinic-gateway /v1</title>
<link rel="stylesheet" href="/v1/docs/swagger-ui.css"></head>
<body><div id="ui"></div>
<script src="/v1/docs/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: '/v1/openapi.json', dom_id: '#ui', persistAuthorization: true });</script>
</body></html>`;

/** Serves the page or one of its assets; false when the path is neither (the caller's 404). */
export function serveDocs(urlPath: string, res: ServerResponse): boolean {
  if (urlPath === '/v1/docs' || urlPath === '/v1/docs/') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...unframeable() });
    res.end(page);
    return true;
  }
  const file = urlPath.slice('/v1/docs/'.length);
  if (!allowed.has(file)) return false;
  const type = file.endsWith('.css') ? 'text/css' : file.endsWith('.png') ? 'image/png' : 'text/javascript';
  res.writeHead(200, { 'content-type': type, 'cache-control': 'public, max-age=86400' });
  createReadStream(path.join(assetsDir, file)).pipe(res);
  return true;
}
