import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import { type AddressPolicy, bareHost, urlPolicy } from '../lib/address-policy.ts';
import type { ClinicMode } from '../lib/clinic-mode.ts';
import { guardedLookup, RefusedAddress, type Resolver } from '../lib/guarded-lookup.ts';

/**
 * One POST of a delivery's bytes to a receiver (issue 17, Delivery), answering what happened and
 * never throwing: the SSRF guard at connect time (the media download's, src/lib/guarded-lookup.ts),
 * no redirect followed (a 3xx is a failure), one deadline for connecting and answering, the
 * response body read up to a cap. Nothing here touches the database.
 *
 * The deadline starts when the request has its socket, not when it is made: a worker runs up to
 * 32 pollers × 8 attempts at once, more than the MAX_SOCKETS_PER_HOST one receiver's host gets, and
 * an attempt waiting for a socket that a hanging receiver's attempts hold has not reached its
 * receiver yet (timing it out would fail a healthy receiver's delivery). The wait for a socket is
 * bounded on its own (SOCKET_WAIT_FACTOR × the deadline), so an attempt still ends in time for its
 * job's expiry (expireInSeconds, src/services/webhooks/delivery-jobs.ts).
 */
export interface SendOptions {
  timeoutMs: number;
  /** The subscription's clinic's mode: a test clinic's receiver may be plain http and on loopback. */
  mode: ClinicMode;
  /** The DNS resolver the guard checks (tests stand in a rebinding one); dns.lookup by default. */
  resolve?: Resolver;
}

export interface SendResult {
  ok: boolean;
  /** The receiver's status; null when no answer came. */
  status: number | null;
  /** The response body's first bytes (utf-8), null when there was none. */
  body: string | null;
  /** Why the attempt failed; null when it succeeded. */
  error: string | null;
  durationMs: number;
}

/** Sockets to one host (host:port) at once per worker process; more attempts wait for one. */
export const MAX_SOCKETS_PER_HOST = 64;

/** How long an attempt may wait for a socket, in deadlines (timeoutMs): the longest wait, 3 hanging rounds. */
export const SOCKET_WAIT_FACTOR = 3;

/** Response bytes read at most; the rest is not waited for (the excerpt keeps fewer still). */
const BODY_READ_MAX = 16 * 1024;

/**
 * Keep-alive agents, one per scheme and policy: deliveries to one receiver reuse their
 * connections (the bench's 1,000/s needs it), and every new socket still goes through the guard's
 * lookup, so a pooled connection is one that passed the check when it connected.
 */
const agents = new Map<string, http.Agent>();
function agentFor(https_: boolean, policy: AddressPolicy, resolve: Resolver | undefined): http.Agent {
  const key = `${https_}:${policy.loopback}:${resolve ? 'custom' : 'dns'}`;
  let agent = agents.get(key);
  if (!agent) {
    // Only a test's stand-in resolver changes per run; it gets a fresh agent each time.
    const options = {
      keepAlive: !resolve,
      maxSockets: MAX_SOCKETS_PER_HOST,
      maxFreeSockets: 16,
      scheduling: 'lifo' as const,
    };
    agent = https_ ? new https.Agent(options) : new http.Agent(options);
    if (!resolve) agents.set(key, agent);
  }
  return agent;
}

export async function sendDelivery(
  url: string,
  body: string,
  headers: Record<string, string>,
  opts: SendOptions,
): Promise<SendResult> {
  const started = performance.now();
  const done = (r: Omit<SendResult, 'durationMs'>): SendResult => ({
    ...r,
    durationMs: Math.round(performance.now() - started),
  });
  const refused = (error: string) => done({ ok: false, status: null, body: null, error });
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return refused('The URL is not valid; not sent.');
  }
  const checked = urlPolicy(u, opts.mode, 'The URL');
  if ('refused' in checked) return refused(`${checked.message} Not sent.`);
  try {
    const res = await post(u, body, headers, checked.policy, opts);
    const status = res.status;
    if (status >= 200 && status < 300) return done({ ok: true, status, body: res.body, error: null });
    const error =
      status >= 300 && status < 400
        ? `Redirects are not followed: status ${status}${res.location ? ` to ${res.location}` : ''}.`
        : `The receiver answered status ${status}, not 2xx.`;
    return done({ ok: false, status, body: res.body, error });
  } catch (err) {
    if (err instanceof RefusedAddress)
      return refused(
        `${bareHost(u)} resolved to an address that is not allowed when connecting (${err.range} range); not sent.`,
      );
    if (err instanceof TimedOut) return refused(`No answer within ${opts.timeoutMs} ms (timed out).`);
    if (err instanceof NoSocket)
      return refused(
        `No connection to the receiver's host was free within ${SOCKET_WAIT_FACTOR * opts.timeoutMs} ms (this worker's ${MAX_SOCKETS_PER_HOST} to it were busy); not sent.`,
      );
    const code = (err as NodeJS.ErrnoException)?.code ?? (err as Error)?.message ?? 'unknown';
    return refused(`Connection error ${code}.`);
  }
}

class TimedOut extends Error {}
class NoSocket extends Error {}

function post(
  u: URL,
  body: string,
  headers: Record<string, string>,
  policy: AddressPolicy,
  opts: SendOptions,
): Promise<{ status: number; body: string | null; location?: string }> {
  return new Promise((resolve, reject) => {
    const secure = u.protocol === 'https:';
    const client = secure ? https : http;
    const payload = Buffer.from(body);
    const req = client.request(u, {
      method: 'POST',
      agent: agentFor(secure, policy, opts.resolve),
      lookup: guardedLookup(policy, opts.resolve),
      headers: {
        ...headers,
        'content-length': String(payload.length),
        'user-agent': 'clinic-gateway-webhooks',
      },
    });
    let timer = setTimeout(() => req.destroy(new NoSocket()), SOCKET_WAIT_FACTOR * opts.timeoutMs);
    req.once('socket', () => {
      clearTimeout(timer);
      timer = setTimeout(() => req.destroy(new TimedOut()), opts.timeoutMs);
    });
    const fail = (err: Error) => {
      clearTimeout(timer);
      reject(err);
    };
    req.on('error', fail);
    req.on('response', (res: IncomingMessage) => {
      readCapped(res).then((text) => {
        clearTimeout(timer);
        const location = res.headers.location;
        resolve({ status: res.statusCode ?? 0, body: text, ...(location ? { location } : {}) });
      }, fail);
    });
    req.end(payload);
  });
}

/** Up to BODY_READ_MAX bytes of the body; a longer one is cut (its connection closed). */
function readCapped(res: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = () => resolve(size ? Buffer.concat(chunks, size).toString('utf8') : null);
    res.on('data', (chunk: Buffer) => {
      if (size >= BODY_READ_MAX) return;
      chunks.push(chunk);
      size += chunk.length;
      if (size >= BODY_READ_MAX) {
        res.destroy();
        finish();
      }
    });
    res.on('end', finish);
    res.on('error', (err) => (size >= BODY_READ_MAX ? finish() : reject(err)));
  });
}
