import { createHash, hkdfSync, randomBytes } from 'node:crypto';

/**
 * The secrets a service process signs and checks with: the messaging network's callbacks and the
 * media links. Every process that serves one database must hold the same ones, or a link one
 * instance signed is a 404 on another and a callback signed for one is refused by the next
 * (docs/scale.md, Running several instances). Each is NETWORK_SECRET or MEDIA_LINK_SECRET when set, else derived from
 * ROOT_SECRET (HKDF, one label each), else random for this process only: fine alone, refused at
 * start when another process serves the same database (src/server/prove-connections.ts).
 */
export interface ProcessSecrets {
  network: string;
  mediaLinks: string;
  /** False when at least one of them is this process's random one. */
  configured: boolean;
  /** A short hash of both, which processes compare (never the secrets themselves). */
  fingerprint: string;
}

const derived = (root: string, label: string) =>
  Buffer.from(hkdfSync('sha256', root, 'clinic-gateway', label, 32)).toString('hex');

/** The secrets the configuration sets, each its own setting or derived from ROOT_SECRET. */
export function configuredSecrets(c: {
  ROOT_SECRET?: string | undefined;
  NETWORK_SECRET?: string | undefined;
  MEDIA_LINK_SECRET?: string | undefined;
}): { network?: string; mediaLinks?: string } {
  const pick = (own: string | undefined, label: string) =>
    own ?? (c.ROOT_SECRET ? derived(c.ROOT_SECRET, label) : undefined);
  const network = pick(c.NETWORK_SECRET, 'network callbacks');
  const mediaLinks = pick(c.MEDIA_LINK_SECRET, 'media links');
  return { ...(network ? { network } : {}), ...(mediaLinks ? { mediaLinks } : {}) };
}

/** The given secrets, random ones where absent. */
export function secretsOf(network: string | undefined, mediaLinks: string | undefined): ProcessSecrets {
  const n = network ?? randomBytes(32).toString('hex');
  const m = mediaLinks ?? randomBytes(32).toString('hex');
  return {
    network: n,
    mediaLinks: m,
    configured: network !== undefined && mediaLinks !== undefined,
    fingerprint: createHash('sha256').update(n).update('\0').update(m).digest('hex').slice(0, 12),
  };
}
