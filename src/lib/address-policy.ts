import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { ClinicMode } from './clinic-mode.ts';

/**
 * Which addresses the service may connect to on a caller's behalf (the SSRF guard): what media
 * downloads check at connect time (src/media/download.ts) and webhook subscriptions check when
 * created (src/services/webhooks/). Only public unicast addresses pass, loopback too for a test
 * clinic (src/lib/clinic-mode.ts); IPv4-mapped IPv6 is judged as the IPv4 address it maps.
 */
export interface AddressPolicy {
  /** Loopback addresses pass too (a test clinic's). */
  loopback: boolean;
}

/** How the contracts state the rule for a URL the service downloads from (media, recordings). */
export const DOWNLOAD_URL_RULE =
  "https to a public address (a test clinic's, cg_test_ keys, may also be plain http and a loopback address: docs/test-mode.md)";

/** The host of a URL without IPv6 brackets. */
export const bareHost = (u: URL) => (u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname);

/**
 * The policy a URL's connection is held to, by the clinic's mode (docs/test-mode.md): a live
 * clinic's URLs are https to public addresses; a test clinic's may be plain http too, and may
 * point to loopback (a receiver or media server on the developer's machine). Private, link-local
 * and metadata addresses are refused in both modes. `scheme`: the URL's scheme is not allowed
 * (its message, naming `param`); `range`: its host is an IP literal the policy refuses (a range
 * name). A host name is checked when it is resolved.
 */
export type UrlPolicy =
  | { policy: AddressPolicy }
  | { refused: 'scheme'; message: string }
  | { refused: 'range'; range: string; message: string };

/**
 * The way out for a developer whose receiver or media server is on this machine: a live clinic's
 * refusal says where plain http and loopback are allowed.
 */
export const LOOPBACK_HINT =
  ' Plain http and loopback addresses are allowed for test clinics only (cg_test_ keys; docs/test-mode.md).';

export function urlPolicy(u: URL, mode: ClinicMode, param: string): UrlPolicy {
  const host = bareHost(u);
  const test = mode === 'test';
  if (u.protocol !== 'https:' && !(test && u.protocol === 'http:'))
    return {
      refused: 'scheme',
      message: test
        ? `${param} must be an http or https URL, not ${u.protocol}.`
        : `${param} must be an https URL, not ${u.protocol}.${u.protocol === 'http:' ? LOOPBACK_HINT : ''}`,
    };
  const policy: AddressPolicy = { loopback: test };
  const range = isIP(host) ? refusedRange(host, policy) : null;
  if (range) return { refused: 'range', range, message: rangeRefusal(range, param) };
  return { policy };
}

/** Cloud metadata endpoints that are public unicast addresses (the others are link-local or private). */
const METADATA = new Set(['168.63.129.16']);

/** Why `address` may not be connected to under `policy` (a range name), or null when it may. */
export function refusedRange(address: string, policy: AddressPolicy): string | null {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // process(): an IPv4-mapped IPv6 address (::ffff:10.0.0.1) becomes the IPv4 address it maps.
    ip = ipaddr.process(address);
  } catch {
    return 'unparsable';
  }
  const range = ip.range();
  if (range === 'loopback') return policy.loopback ? null : range;
  if (range !== 'unicast') return range;
  // IPv4-compatible IPv6 (::a.b.c.d, deprecated) is "unicast" to ipaddr.js but names an IPv4 address.
  if (ip.kind() === 'ipv6' && ip.match(ipaddr.IPv6.parse('::'), 96)) return 'ipv4Compatible';
  if (METADATA.has(ip.toString())) return 'metadata';
  return null;
}

const RANGE_NAMES: Record<string, string> = {
  loopback: 'loopback',
  private: 'private network',
  uniqueLocal: 'private network',
  linkLocal: 'link-local',
  carrierGradeNat: 'carrier-grade NAT',
  multicast: 'multicast',
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  metadata: 'cloud metadata',
};

/** The refusal's text for a range `refusedRange` named, about the field `param`. */
export function rangeRefusal(range: string, param: string): string {
  const refused = `${param} points to an address that is not allowed (${RANGE_NAMES[range] ?? 'reserved'} range).`;
  // Loopback is refused only for live clinics.
  return range === 'loopback' ? `${refused}${LOOPBACK_HINT}` : refused;
}

/**
 * The first refused range among every address `host` resolves to (an IP literal is its own
 * address), or null when all pass. One refused address refuses the host: a name resolving to
 * both a public and a private address is not allowed. A lookup error is thrown as it is.
 */
export async function refusedHost(host: string, policy: AddressPolicy): Promise<string | null> {
  const addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
  for (const a of addresses) {
    const range = refusedRange(a, policy);
    if (range) return range;
  }
  return null;
}
