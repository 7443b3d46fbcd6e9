import { randomBytes } from 'node:crypto';
import { type Client, createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { AppError } from '../lib/errors.ts';
import { tryParseId } from '../lib/ids.ts';
import { serializeEnvelope } from '../services/events/envelope.ts';
import { SECRET_PREFIX } from '../services/webhooks/webhook.resource.ts';
import { deliveryHeaders } from '../webhooks/signing.ts';

/**
 * `events listen` (as Stripe's CLI does it): subscribes to `events` over the websocket and POSTs
 * each envelope to a local receiver, signed exactly as a webhook delivery (src/webhooks/signing.ts:
 * the same bytes, the same headers) with a secret made for this session, so an integrator builds
 * and checks a receiver without a public https URL.
 */
export interface ListenOptions {
  /** The service, http(s)://host:port; its /graphql websocket is used. */
  url: string;
  key: string;
  forwardTo: string;
  types?: string[];
  /** One line per event forwarded (and the ready line). */
  print(line: string): void;
}

const FORWARD_TIMEOUT_MS = 10_000;

export function listenAndForward(opts: ListenOptions): {
  secret: string;
  done: Promise<void>;
  stop(): Promise<void>;
} {
  let forward: URL;
  try {
    forward = new URL(opts.forwardTo);
  } catch {
    throw new AppError('validation_failed', `--forward-to must be a URL, got '${opts.forwardTo}'.`);
  }
  if (forward.protocol !== 'http:' && forward.protocol !== 'https:')
    throw new AppError('validation_failed', '--forward-to must be an http or https URL.');
  const secret = `${SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
  const client: Client = createClient({
    url: `${opts.url.replace(/\/+$/, '').replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { Authorization: `Bearer ${opts.key}` },
    lazy: false,
    // A lost connection ends the command (exit 1): run it again with the printed last id in mind.
    retryAttempts: 0,
    onNonLazyError: () => {},
  });
  let chain: Promise<void> = Promise.resolve();

  async function deliver(envelope: { id: string; type: string; created_at: string; data: unknown }) {
    const row = {
      id: tryParseId('Event', envelope.id) ?? 0,
      type: envelope.type,
      createdAt: new Date(envelope.created_at),
      data: envelope.data as Record<string, unknown>,
    };
    const body = serializeEnvelope(row);
    const started = performance.now();
    let status: string;
    try {
      const res = await fetch(forward, {
        method: 'POST',
        headers: deliveryHeaders(secret, row, body, new Date()),
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
      });
      await res.arrayBuffer().catch(() => {});
      status = String(res.status);
    } catch (e) {
      status = `error (${(e as Error).message})`;
    }
    const ms = Math.round(performance.now() - started);
    opts.print(
      `${new Date().toISOString()}  ${envelope.type} ${envelope.id}  -> ${status} POST ${forward.href} (${ms} ms)`,
    );
  }

  const done = new Promise<void>((resolve, reject) => {
    client.subscribe(
      {
        query: 'subscription($types: [String!]) { events(types: $types) { id type created_at data } }',
        variables: { types: opts.types?.length ? opts.types : null },
      },
      {
        next: (r: any) => {
          if (r.errors?.length) {
            reject(new AppError('invalid_request', r.errors.map((e: any) => e.message).join('; ')));
            return;
          }
          const envelope = r.data.events;
          chain = chain.then(() => deliver(envelope));
        },
        error: (e: any) => {
          const code = e?.code;
          const message = Array.isArray(e)
            ? e.map((x: any) => x.message).join('; ')
            : code === 4403
              ? 'the service refused the key (4403): is it valid, not revoked, with webhooks:manage?'
              : `the connection closed (${code ?? e?.message ?? e})`;
          reject(new AppError(code === 4403 ? 'unauthenticated' : 'invalid_request', message));
        },
        complete: () => resolve(),
      },
    );
    client.on('connected', () =>
      opts.print(`Ready: forwarding events to ${forward.href}. Signing secret: ${secret}`),
    );
  });
  return {
    secret,
    done,
    async stop() {
      await chain;
      await client.dispose();
    },
  };
}
