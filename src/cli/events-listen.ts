import { createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Client, createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { EVENT_TYPES, EventTypeSet, isEventType } from '../events/types.ts';
import { enumValueOf } from '../lib/enums.ts';
import { AppError, type ErrorCode } from '../lib/errors.ts';
import { tryParseId } from '../lib/ids.ts';
import { enumNameOf } from '../lib/names.ts';
import { serializeEnvelope } from '../services/events/envelope.ts';
import { SECRET_PREFIX } from '../services/webhooks/webhook.resource.ts';
import { deliveryHeaders } from '../webhooks/signing.ts';
import { urlHint } from './service-url.ts';

/**
 * `events listen` (as Stripe's CLI does it): subscribes to `events` over the websocket and POSTs
 * each envelope to a local receiver, signed exactly as a webhook delivery (src/webhooks/signing.ts:
 * the same bytes, the same headers) with a secret that stays the same for a key on this machine,
 * so an integrator builds and checks a receiver without a public https URL, and configures it once.
 * A lost connection (the service restarting) is made again and resumed with `events(after:)`.
 */
export interface ListenOptions {
  /** The service, http(s)://host:port; its /graphql websocket is used. */
  url: string;
  /** Whether --url named it (else it is the default from PORT and HOST): the error says what to do. */
  urlGiven?: boolean;
  key: string;
  forwardTo: string;
  types?: string[];
  /** Sign with this instead of the secret this machine keeps for the key. */
  secret?: string;
  /** One line per event forwarded (and the ready and reconnect lines). */
  print(line: string): void;
}

const FORWARD_TIMEOUT_MS = 10_000;
/** Waits between reconnection attempts: doubling from the first to the cap, ±20 %. */
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 5_000;

/**
 * Where this machine keeps the seed of the secrets: the user's config folder, as Stripe's CLI keeps
 * its own (XDG_CONFIG_HOME, else ~/.config; %APPDATA% on Windows).
 */
export function seedFile(env: NodeJS.ProcessEnv = process.env): string {
  const base =
    env.XDG_CONFIG_HOME ||
    (process.platform === 'win32' && env.APPDATA) ||
    path.join(os.homedir(), '.config');
  return path.join(base, 'clinic-gateway', 'events-listen.seed');
}

/**
 * The secret `events listen` signs with for `key` on this machine: an HMAC of the key under a
 * random seed made once per machine. The same on every run, different for another key or machine;
 * neither the key nor a secret is written to disk, and a new key gets a new secret. In the
 * standard form (base64), so a receiver's Standard Webhooks library takes it.
 */
export function listenSecret(key: string, file = seedFile()): string {
  return `${SECRET_PREFIX}${createHmac('sha256', machineSeed(file)).update(key).digest('base64')}`;
}

const SEED = /^[A-Za-z0-9_-]{43}$/;

function machineSeed(file: string): Buffer {
  const cannot = (e: unknown) =>
    new AppError(
      'invalid_request',
      `cannot keep the signing secret's seed in ${file} (${(e as Error).message}): pass --secret instead.`,
    );
  const read = (): Buffer | null => {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8').trim();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw cannot(e);
    }
    if (!SEED.test(text))
      throw new AppError(
        'invalid_request',
        `${file} is not a seed events listen wrote: delete it (the secrets of every key change) or pass --secret.`,
      );
    return Buffer.from(text, 'base64url');
  };
  const found = read();
  if (found) return found;
  // Written whole under another name, then linked: a concurrent first run reads a whole seed, and
  // the one that links second reads (and uses) the first one's.
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    fs.writeFileSync(tmp, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
    fs.linkSync(tmp, file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw cannot(e);
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  const made = read();
  if (!made) throw cannot(new Error('it vanished as it was written'));
  return made;
}

/** A failure worth another attempt (the service or its database away), as opposed to an AppError. */
class Transient extends Error {}

/** Close codes after which another attempt is futile: the key refused, or a protocol fault. */
const FATAL_CLOSES = new Set([1002, 1003, 1007, 1008, 1009, 1010, 4400, 4401, 4403, 4406, 4409, 4411]);
/** Error codes of a refused operation that may pass later; any other ends the command. */
const RETRYABLE_CODES = new Set<string>([
  'rate_limited',
  'internal_error',
  'service_unavailable',
  'deadline_exceeded',
]);

type Outcome = { fatal: AppError } | { lost: string; healthy: boolean };

interface Envelope {
  id: string;
  type: string;
  created_at: string;
  data: unknown;
}

/**
 * An `events` subscription result (the query aliases createdAt as created_at) as the REST
 * envelope (src/services/events/envelope.ts): the subscription names event types as GraphQL's
 * enum does (CHAT_MESSAGE_SENT), the command line, the printed lines and the signed envelope as
 * REST and webhook deliveries do (chat.message.sent), so a receiver sees a real delivery's bytes.
 */
const envelopeOf = (e: Envelope): Envelope => ({
  id: e.id,
  type: enumValueOf(EventTypeSet, e.type) ?? e.type,
  created_at: e.created_at,
  data: e.data,
});

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
  if (opts.secret !== undefined && !/^\S+$/.test(opts.secret))
    throw new AppError('validation_failed', '--secret must be a non-empty string without spaces.');
  const secret = opts.secret ?? listenSecret(opts.key);
  const origin = opts.url.replace(/\/+$/, '');
  const wsUrl = `${origin.replace(/^http/, 'ws')}/graphql`;
  const unknown = opts.types?.filter((t) => !isEventType(t)) ?? [];
  if (unknown.length)
    throw new AppError(
      'validation_failed',
      `--types: unknown event type ${unknown.map((t) => `'${t}'`).join(', ')}; the types are ${EVENT_TYPES.join(', ')}.`,
    );
  const types = opts.types?.length ? opts.types.map(enumNameOf) : null;

  let stopped = false;
  let current: Client | null = null;
  let wake = () => {};
  let chain: Promise<void> = Promise.resolve();
  /** The last event taken for forwarding: a reconnection resumes after it. */
  let cursor: string | null = null;
  let lastId = 0;

  async function deliver(envelope: Envelope) {
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

  /** Each event once, in order: forwarding goes on while a lost connection is made again. */
  function take(envelope: Envelope) {
    const n = tryParseId('Event', envelope.id);
    if (n !== null && n <= lastId) return; // the stream ascends: never forwarded twice
    if (n !== null) lastId = n;
    cursor = envelope.id;
    chain = chain.then(() => deliver(envelope));
  }

  /**
   * The newest event the key sees (GET /v1/events?limit=1), or 'evt_1' if none, so a connection
   * lost before the first event still resumes from the start (`after` takes no evt_0; evt_1 can only
   * be this clinic's if it is the database's first event). Also tells a refused key (401/403:
   * AppError) from a service or database not there yet (Transient).
   */
  async function newestEvent(): Promise<string> {
    let res: Response;
    try {
      res = await fetch(`${origin}/v1/events?limit=1`, {
        headers: { authorization: `Bearer ${opts.key}` },
        signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
      });
    } catch (e) {
      // fetch says only "fetch failed"; its cause names the fault (ECONNREFUSED …).
      const cause = (e as Error).cause;
      throw new Transient(cause instanceof Error ? cause.message : (e as Error).message);
    }
    const body = (await res.json().catch(() => null)) as any;
    if (res.ok) return body?.data?.[0]?.id ?? 'evt_1';
    const message = body?.error?.message ?? `HTTP ${res.status}`;
    if (res.status === 401 || res.status === 403)
      throw new AppError(
        res.status === 401 ? 'unauthenticated' : 'forbidden',
        `the service refused the key (${res.status}): ${message} events listen needs a valid key with webhooks:manage.`,
      );
    if (res.status === 429 || res.status >= 500) throw new Transient(`${res.status} ${message}`);
    throw new AppError('invalid_request', `GET ${origin}/v1/events answered ${res.status}: ${message}`);
  }

  const fromErrors = (errors: any[]): Outcome => {
    const message = errors.map((e) => e?.message ?? String(e)).join('; ');
    const codes = errors.map((e) => e?.extensions?.code);
    if (codes.every((c) => RETRYABLE_CODES.has(c))) return { lost: message, healthy: false };
    const code = codes.find((c) => typeof c === 'string') as ErrorCode | undefined;
    return { fatal: new AppError(code ?? 'invalid_request', message) };
  };

  /** One connection and its subscription, until it ends; `after` null: only events from now on. */
  function session(after: string | null, onConnected: () => void): Promise<Outcome> {
    return new Promise((resolve) => {
      let connected = false;
      const client = createClient({
        url: wsUrl,
        webSocketImpl: WebSocket,
        connectionParams: { Authorization: `Bearer ${opts.key}` },
        // Reconnecting is ours: graphql-ws's own would send the first `after` again (and gives up on 1001).
        retryAttempts: 0,
        on: {
          connected: () => {
            connected = true;
            onConnected();
          },
        },
      });
      current = client;
      let ended = false;
      const end = (o: Outcome) => {
        if (ended) return;
        ended = true;
        Promise.resolve(client.dispose()).catch(() => {});
        resolve(o);
      };
      client.subscribe(
        {
          query:
            'subscription($types: [EventType!], $after: ID) { events(types: $types, after: $after) { id type created_at: createdAt data } }',
          variables: { types, after },
        },
        {
          next: (r: any) => {
            if (r.errors?.length) end(fromErrors(r.errors));
            else take(envelopeOf(r.data.events));
          },
          error: (e: any) => {
            if (Array.isArray(e)) return end(fromErrors(e));
            if (typeof e?.code === 'number') {
              const close = `${e.code}${e.reason ? ` ${e.reason}` : ''}`;
              if (e.code === 4403) return end({ fatal: refused(close) });
              if (FATAL_CLOSES.has(e.code))
                return end({ fatal: new AppError('invalid_request', `the connection closed (${close})`) });
              return end({ lost: close, healthy: connected });
            }
            end({ lost: e?.message ?? e?.error?.message ?? String(e), healthy: false });
          },
          complete: () => end({ lost: 'the service ended the subscription', healthy: false }),
        },
      );
    });
  }

  const refused = (close: string) =>
    new AppError(
      'unauthenticated',
      `the service refused the key (${close}): is it valid, not revoked, with webhooks:manage?`,
    );

  /** 4403 is also what a service answers whose database is away: HTTP tells the two apart. */
  async function checkRefusal(o: Outcome): Promise<Outcome> {
    if (!('fatal' in o) || o.fatal.code !== 'unauthenticated') return o;
    try {
      await newestEvent();
      return o;
    } catch (e) {
      if (e instanceof Transient) return { lost: `${o.fatal.message}; ${e.message}`, healthy: false };
      return { fatal: e as AppError };
    }
  }

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  async function run(): Promise<void> {
    // Read before subscribing: events after it are all this run's, even across a lost connection.
    let start: string;
    try {
      start = await newestEvent();
    } catch (e) {
      if (e instanceof Transient)
        throw new AppError(
          'service_unavailable',
          `cannot reach the service at ${origin}: ${e.message}; ${urlHint(origin, opts.urlGiven ?? true)}`,
        );
      throw e;
    }
    let failures = 0;
    let sessions = 0;
    let ready = false;
    while (!stopped) {
      // The first subscription takes events from now on, as a webhook subscription would.
      const after = sessions++ === 0 ? null : (cursor ?? start);
      const outcome = await checkRefusal(
        await session(after, () => {
          if (ready) opts.print(`Reconnected: resuming after ${after}.`);
          else
            opts.print(
              `Ready: forwarding events to ${forward.href}. Signing secret: ${secret} (${opts.secret === undefined ? `kept for this key on this machine: ${seedFile()}` : 'from --secret'})`,
            );
          ready = true;
        }),
      );
      if (stopped) return;
      if ('fatal' in outcome) throw outcome.fatal;
      failures = outcome.healthy ? 0 : failures + 1;
      const wait = Math.round(
        Math.min(RETRY_FIRST_MS * 2 ** failures, RETRY_MAX_MS) * (0.8 + Math.random() * 0.4),
      );
      opts.print(
        `${outcome.healthy ? 'Connection lost' : 'Not connected'} (${outcome.lost}); reconnecting in ${(wait / 1000).toFixed(1)} s, then resuming after ${cursor ?? start}.`,
      );
      await pause(wait);
    }
  }

  const done = run().finally(() => chain);
  return {
    secret,
    done,
    async stop() {
      stopped = true;
      wake();
      await Promise.resolve(current?.dispose()).catch(() => {});
      await chain;
    },
  };
}
