import type { IncomingMessage } from 'node:http';
import ipaddr from 'ipaddr.js';
import proxyaddr from 'proxy-addr';

/**
 * Which peers may tell the service the client's address (`X-Forwarded-For`): none by default
 * (the TCP peer is the client), a number of proxy hops in front of the service, or a list of
 * addresses and CIDR ranges of the proxies (proxy-addr's names `loopback`, `linklocal` and
 * `uniquelocal` included). docs/limits.md, Failed authentication.
 */
export type TrustProxy = (address: string, hop: number) => boolean;

const trustNone: TrustProxy = () => false;

/** Parses `TRUST_PROXY`: empty or `false` (off), a hop count, or a comma-separated list. */
export function parseTrustProxy(value: string): TrustProxy {
  const v = value.trim();
  if (v === '' || v === 'false' || v === '0') return trustNone;
  if (/^\d+$/.test(v)) {
    const hops = Number(v);
    return (_address, hop) => hop < hops;
  }
  // Throws on an address or range it cannot read: the service then refuses to start.
  return proxyaddr.compile(v.split(',').map((s) => s.trim()));
}

/** The client's address: the TCP peer's, or the one a trusted proxy forwarded. */
export function clientAddressOf(req: IncomingMessage, trust: TrustProxy): string {
  if (trust === trustNone) return req.socket.remoteAddress ?? 'unknown';
  return proxyaddr(req, trust);
}

/**
 * Where the client reached the service (for texts that show calls back to it when no PUBLIC_URL
 * says it): the Host it asked for, over https when its connection is TLS or a trusted proxy in
 * front says the client's was (`X-Forwarded-Proto`), else http.
 */
export function requestOrigin(req: IncomingMessage, trust: TrustProxy): string {
  const forwarded = String(req.headers['x-forwarded-proto'] ?? '')
    .split(',')[0]
    .trim()
    .toLowerCase();
  const viaTrusted = forwarded !== '' && trust(req.socket.remoteAddress ?? '', 0);
  const tls = (req.socket as { encrypted?: boolean }).encrypted === true;
  const scheme = viaTrusted ? (forwarded === 'https' ? 'https' : 'http') : tls ? 'https' : 'http';
  return `${scheme}://${req.headers.host ?? '127.0.0.1:4000'}`;
}

/**
 * The address a budget of a client without a key is kept under: an IPv4 address (an
 * IPv4-mapped IPv6 one too) as it is, an IPv6 address by its /64, the least one host is given,
 * so that a host cannot take a fresh budget from each of its 2^64 addresses. Anything else
 * (`unknown`) as it is.
 */
export function budgetAddress(address: string): string {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.process(address.replace(/%.*$/, ''));
  } catch {
    return address;
  }
  if (ip.kind() === 'ipv4') return ip.toString();
  const parts = (ip as ipaddr.IPv6).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...parts, 0, 0, 0, 0]).toNormalizedString()}/64`;
}
