import type { ClinicMode } from '../../lib/clinic-mode.ts';
import { AppError } from '../../lib/errors.ts';
import type { MessagingNetwork } from '../../network/adapter.ts';

/**
 * The messaging network of each clinic mode (docs/test-mode.md): test clinics use the sandbox,
 * live clinics the network a deployment configures, or none (null) until one is.
 */
export interface ChatNetworks {
  test: MessagingNetwork;
  live: MessagingNetwork | null;
}

/** The message a live clinic's send gets while no network is configured for live clinics. */
export const NO_LIVE_NETWORK =
  'No messaging network is configured for live clinics, so nothing was sent. Test clinics (cg_test_ keys) use the sandbox network; a deployment configures the live one (docs/test-mode.md).';

/** The network a clinic of `mode` sends through; a 503 `network_not_configured` when it has none. */
export function networkOf(networks: ChatNetworks, mode: ClinicMode): MessagingNetwork {
  const network = networks[mode];
  if (!network) throw new AppError('network_not_configured', NO_LIVE_NETWORK);
  return network;
}

/** The documented 503 of the writes that reach the network (OpenAPI; src/rest/openapi.ts). */
export const NETWORK_NOT_CONFIGURED_ERROR = {
  code: 'network_not_configured',
  description:
    "`network_not_configured`: the key's clinic is live and no messaging network is configured for live clinics; nothing was written (test clinics use the sandbox: docs/test-mode.md). Or `service_unavailable`: the database is unreachable (`Retry-After`).",
  message: NO_LIVE_NETWORK,
};
