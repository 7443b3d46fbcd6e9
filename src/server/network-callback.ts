import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Clock } from '../lib/clock.ts';
import { AppError } from '../lib/errors.ts';
import { parseJsonBody, utf8Text } from '../lib/json-text.ts';
import type { Limits } from '../lib/limits.ts';
import { currentRequestId } from '../lib/request-context.ts';
import { verifyBody } from '../lib/signing.ts';
import { CALLBACK_PATH, SIGNATURE_HEADER } from '../network/adapter.ts';
import { parseCallback } from '../network/callback-schema.ts';
import { errorBody } from '../rest/errors.ts';
import { type MediaCopier, recordNetworkEvent } from '../services/chat/network-events.ts';
import { readBody } from './body.ts';

export interface CallbackDeps {
  em: EntityManager;
  /** The network's secret: the HMAC key of every callback body (src/lib/signing.ts). */
  secret: string;
  limits: Pick<Limits, 'maxBodyBytes' | 'maxJsonDepth'>;
  clock: Clock;
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
 * recorded once (src/services/chat/network-events.ts). Every signed body gets a 2xx or a 4xx
 * (docs/chat.md, The callback): only a fault of the service's is a 5xx the network retries.
 */
export async function handleNetworkCallback(req: IncomingMessage, res: ServerResponse, deps: CallbackDeps) {
  if (req.method !== 'POST') {
    res.setHeader('allow', 'POST');
    return fail(
      res,
      new AppError('method_not_allowed', `${req.method} is not allowed on ${CALLBACK_PATH}; use POST.`),
    );
  }
  const body = await readBody(req, deps.limits.maxBodyBytes);
  if (body === null) return;
  if (body === 'too large')
    return fail(
      res,
      new AppError('payload_too_large', `The body is larger than ${deps.limits.maxBodyBytes} bytes.`),
    );
  if (!verifyBody(deps.secret, body, req.headers[SIGNATURE_HEADER] as string | undefined))
    return fail(res, new AppError('unauthenticated', 'The callback signature is missing or wrong.'));
  let json: unknown;
  try {
    json = parseJsonBody(utf8Text(body), deps.limits.maxJsonDepth);
  } catch (e) {
    return fail(res, e as AppError);
  }
  const parsed = parseCallback(json, deps.clock.now());
  if (!parsed.ok) return fail(res, new AppError('validation_failed', parsed.message));
  try {
    send(res, 200, await recordNetworkEvent(deps.em.fork(), parsed.event, deps.copyMedia));
  } catch (e) {
    // A refusal of the service's (a reaction from another number) is the network's 4xx: it
    // does not retry it. Anything else (the database down, a receipt ahead of its send's
    // network id) stays a 5xx it retries.
    if (e instanceof AppError && (e.status < 500 || e.code === 'service_unavailable')) return fail(res, e);
    throw e;
  }
}
