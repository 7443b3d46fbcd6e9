import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The one CORS policy, for /v1 and /graphql alike. The API authenticates with a bearer key, never
 * with cookies, so a browser page may call it from any origin without credentials:
 * `Access-Control-Allow-Origin: *` and never `Allow-Credentials`. With CORS_ORIGINS set, only
 * those origins are named (one at a time, with `Vary: Origin`); others get no CORS headers and
 * their browsers refuse the answer. An arbitrary Origin is never echoed.
 */
export interface CorsPolicy {
  /** Sets the CORS headers of a response; true when the request was a pre-flight, answered 204. */
  apply(req: IncomingMessage, res: ServerResponse): boolean;
}

// The writes' retry and race headers too: a browser dashboard sends If-Match and reads the ETag.
const ALLOW_HEADERS = 'Authorization, Content-Type, Accept, Idempotency-Key, If-Match';
const ALLOW_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';
const EXPOSE_HEADERS =
  'X-Request-Id, Retry-After, RateLimit-Policy, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, ETag, Idempotent-Replayed';

export function corsPolicy(origins: readonly string[]): CorsPolicy {
  const allowed = new Set(origins);
  return {
    apply(req, res) {
      const origin = req.headers.origin;
      if (origin === undefined) return false;
      let allow: string | null = '*';
      if (allowed.size) {
        res.setHeader('vary', 'Origin');
        allow = allowed.has(origin) ? origin : null;
      }
      const preflight =
        req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
      if (allow) {
        res.setHeader('access-control-allow-origin', allow);
        res.setHeader('access-control-expose-headers', EXPOSE_HEADERS);
        if (preflight) {
          res.setHeader('access-control-allow-methods', ALLOW_METHODS);
          res.setHeader('access-control-allow-headers', ALLOW_HEADERS);
          res.setHeader('access-control-max-age', '600');
        }
      }
      if (!preflight) return false;
      res.writeHead(204);
      res.end();
      return true;
    },
  };
}
