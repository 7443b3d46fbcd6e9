import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { type AddressPolicy, refusedRange } from './address-policy.ts';

/**
 * The connect-time half of the SSRF guard (src/lib/address-policy.ts), shared by media downloads
 * and webhook deliveries: a socket's own `lookup`, so the address checked is the address the
 * socket connects to, and a DNS answer that changes between a check and the connection (DNS
 * rebinding) cannot slip through. An IP literal never reaches a lookup: callers check it first.
 */

/** Thrown from the socket's lookup when an address is refused; `range` names why. */
export class RefusedAddress extends Error {
  readonly range: string;
  constructor(range: string) {
    super(`address not allowed (${range})`);
    this.range = range;
  }
}

/** dns.lookup's shape, so tests can stand in a resolver that answers what an attacker's DNS would. */
export type Resolver = (
  hostname: string,
  options: { all: true; family?: number },
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

const systemResolver: Resolver = (hostname, options, callback) => dnsLookup(hostname, options, callback);

/**
 * dns.lookup, then every address it returns is checked; the socket connects only to those. One
 * refused address refuses the host (a name resolving to both a public and a private address is
 * not connected to).
 */
export function guardedLookup(policy: AddressPolicy, resolve: Resolver = systemResolver): LookupFunction {
  return (hostname, options, callback) => {
    const family = typeof options.family === 'number' ? options.family : undefined;
    resolve(hostname, { all: true, ...(family ? { family } : {}) }, (err, addresses) => {
      if (err) return callback(err, '');
      for (const a of addresses) {
        const range = refusedRange(a.address, policy);
        if (range) return callback(new RefusedAddress(range), '');
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first)
        return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '');
      callback(null, first.address, first.family);
    });
  };
}
