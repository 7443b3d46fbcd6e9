import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../lib/errors.ts';
import { currentRequestId } from '../lib/request-context.ts';
import { verifyBody } from '../lib/signing.ts';
import { errorBody } from '../rest/errors.ts';
import { readBody } from '../server/body.ts';
import { type MediaCopier, recordNetworkEvent } from '../services/chat/network-events.ts';
import { parseCallback } from './callback-schema.ts';

/** The one endpoint the messaging network calls back (a real network and the sandbox alike). */
export const CALLBACK_PATH = '/hooks/network';
export const SIGNATURE_HEADER = 'x-service-signature';

export interface CallbackDeps {
  em: EntityManager;
  /** The network's secret: the HMAC key of every callback body (src/lib/signing.ts). */
  secret: string;
  maxBodyBytes: number;
  copyMedia?: MediaCopier;
}

function send(res: ServerResponse, status: number, body: unknown) {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

const fail = (res: ServerResponse, err: AppError) =>
  send(res, err.status, errorBody(err, currentRequestId()));

/**
 * POST /hooks/network: the signature (HMAC-SHA256 of the raw body) is checked before the body is
 * parsed; a bad or missing one is a 401 and nothing is stored. Then the payload is checked and
 * recorded once (src/services/chat/network-events.ts).
 */
export async function handleNetworkCallback(req: IncomingMessage, res: ServerResponse, deps: CallbackDeps) {
  if (req.method !== 'POST') {
    res.setHeader('allow', 'POST');
    return fail(
      res,
      new AppError('method_not_allowed', `${req.method} is not allowed on ${CALLBACK_PATH}; use POST.`),
    );
  }
  const body = await readBody(req, deps.maxBodyBytes);
  if (body === null) return;
  if (body === 'too large')
    return fail(
      res,
      new AppError('payload_too_large', `The body is larger than ${deps.maxBodyBytes} bytes.`),
    );
  if (!verifyBody(deps.secret, body, req.headers[SIGNATURE_HEADER] as string | undefined))
    return fail(res, new AppError('unauthenticated', 'The callback signature is missing or wrong.'));
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    return fail(res, new AppError('invalid_request', 'The body is not valid JSON.'));
  }
  const parsed = parseCallback(json);
  if (!parsed.ok) return fail(res, new AppError('validation_failed', parsed.message));
  const recorded = await recordNetworkEvent(deps.em.fork(), parsed.event, deps.copyMedia);
  send(res, 200, recorded);
}
