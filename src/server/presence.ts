import { listen } from '../lib/listen.ts';
import { otherProcessTags, taggedName } from '../lib/process-tags.ts';
import type { ProcessSecrets } from '../lib/secrets.ts';
import { proveSecretsAgree } from './prove-connections.ts';

/** The channel a worker's presence listens on: nothing is sent there; the connection is the point. */
const PRESENCE_CHANNEL = 'clinic_gateway_presence';

/**
 * A process without the http role that signs with its secrets (a worker with the sends role: its
 * sandbox signs the network's callbacks, its sends sign media links) keeps a tagged session
 * connection as an instance's relay does (src/lib/process-tags.ts): instances started later
 * compare their secrets with it, and it refuses to start when its own differ from theirs.
 * A listening connection, for the heartbeat and reconnection src/lib/listen.ts gives.
 */
export async function startPresence(
  sessionUrl: string,
  secrets: ProcessSecrets,
): Promise<{ close(): Promise<void> }> {
  const listening = await listen({
    databaseUrl: sessionUrl,
    channel: PRESENCE_CHANNEL,
    name: taggedName('worker', secrets.fingerprint),
    onNotify: () => {},
  });
  try {
    await proveSecretsAgree(
      { otherTags: async () => (listening.client ? otherProcessTags(listening.client) : []) },
      secrets,
    );
  } catch (err) {
    await listening.close();
    throw err;
  }
  return listening;
}
