import { listen } from '../lib/listen.ts';
import { forgetKey, KEY_CHANGES_CHANNEL } from './keys.ts';

/**
 * LISTENs for key changes (created, revoked) announced by any process on this database, the CLI
 * included, and evicts them from this process's key cache. If the connection drops, the cache is
 * cleared, the connection is re-established (src/lib/listen.ts), and the cache is cleared again
 * once LISTEN is back: changes announced while no one listened were missed, and verdicts cached
 * meanwhile may be stale.
 */
export function listenForKeyChanges(databaseUrl: string): Promise<{ close(): Promise<void> }> {
  return listen({
    databaseUrl,
    channel: KEY_CHANGES_CHANNEL,
    name: 'clinic-gateway key changes',
    onNotify: (payload) => forgetKey(payload),
    onListening: () => forgetKey(),
    onLost: () => forgetKey(),
  });
}
