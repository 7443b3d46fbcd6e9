import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A webhook receiver written from the spec's "Verification" section and header table alone (as
 * test/webhook-signing.test.ts's): HMAC-SHA256 over the raw bytes with the secret, `sha256=`
 * prefixed, compared in constant time; the event id and type headers must be the body's;
 * duplicates (same X-Service-Event-Id) are answered 2xx and not processed again. `mode` makes it
 * answer a status of choice, or hang (never answer) to test timeouts and isolation.
 */
export interface Receiver {
  url: string;
  /** Verified envelopes, once per event id, in arrival order. */
  accepted: { id: string; type: string; body: any; timestamp: number }[];
  /**
   * Every verified request, duplicates included: its exact body bytes and headers, and which of
   * `known` have a signature in its header (in `known`'s order).
   */
  arrivals: { id: string; raw: string; headers: IncomingHttpHeaders; signedBy: string[] }[];
  /** Secrets whose signatures each arrival is checked for (a rotation's old and new). */
  known: string[];
  /** Every request that arrived (verified or not). */
  hits: number;
  /** Requests refused for a bad signature or headers. */
  refused: number;
  /** `delayMs`: answer that late (a slow receiver). */
  mode: { status?: number; hang?: boolean; delayMs?: number };
  /** Requests under way now, and the most there ever were at once. */
  inFlight: number;
  maxInFlight: number;
  secret: string;
  /** Resolves when `n` events have been accepted. */
  waitFor(n: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

const rawBodyOf = async (req: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

export async function startReceiver(secret = ''): Promise<Receiver> {
  const r: Omit<Receiver, 'url' | 'close' | 'waitFor'> = {
    accepted: [],
    arrivals: [],
    hits: 0,
    refused: 0,
    inFlight: 0,
    maxInFlight: 0,
    mode: {},
    secret,
    known: [],
  };
  const hanging = new Set<import('node:http').ServerResponse>();
  const server: Server = createServer(async (req, res) => {
    r.hits++;
    r.maxInFlight = Math.max(r.maxInFlight, ++r.inFlight);
    // Until the answer is written or the connection goes (a killed worker's attempt).
    let counted = true;
    const done = () => {
      if (counted) r.inFlight--;
      counted = false;
    };
    res.once('finish', done);
    res.once('close', done);
    const raw = await rawBodyOf(req);
    if (r.mode.hang) {
      hanging.add(res);
      return;
    }
    if (r.mode.delayMs) await new Promise((resolve) => setTimeout(resolve, r.mode.delayMs));
    const given = req.headers['x-service-signature'];
    // Several comma-separated entries after a rotation (docs/events.md, Secret rotation): one
    // matching the secret held is enough.
    const entries = typeof given === 'string' ? given.split(',') : [];
    const signs = (secret: string) => {
      const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`);
      return entries.some(
        (e) => Buffer.byteLength(e) === expected.length && timingSafeEqual(Buffer.from(e), expected),
      );
    };
    const ok = req.method === 'POST' && signs(r.secret);
    const id = req.headers['x-service-event-id'];
    const type = req.headers['x-service-event-type'];
    const ts = req.headers['x-service-timestamp'];
    const body = ok ? JSON.parse(raw.toString('utf8')) : null;
    if (
      !ok ||
      typeof id !== 'string' ||
      typeof type !== 'string' ||
      typeof ts !== 'string' ||
      !/^\d+$/.test(ts) ||
      body.id !== id ||
      body.type !== type
    ) {
      r.refused++;
      return void res.writeHead(401).end();
    }
    if (r.mode.status && (r.mode.status < 200 || r.mode.status > 299))
      return void res.writeHead(r.mode.status, { location: '/elsewhere' }).end('not now');
    r.arrivals.push({
      id,
      raw: raw.toString('utf8'),
      headers: req.headers,
      signedBy: r.known.filter(signs),
    });
    if (!r.accepted.some((a) => a.id === id)) r.accepted.push({ id, type, body, timestamp: Number(ts) });
    res.writeHead(r.mode.status ?? 204).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const receiver = r as Receiver;
  receiver.url = `http://127.0.0.1:${port}/hooks`;
  receiver.waitFor = async (n, timeoutMs = 10_000) => {
    const until = Date.now() + timeoutMs;
    while (receiver.accepted.length < n) {
      if (Date.now() > until)
        throw new Error(`receiver: ${receiver.accepted.length} of ${n} events after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  receiver.close = () =>
    new Promise((resolve) => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}
