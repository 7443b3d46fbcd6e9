import pg from 'pg';
import type { ConnectionMode } from './session-url.ts';
import { guardStatement } from './write-deadline.ts';

/** Each named statement's name by its `$n` text (src/db/named-statements.ts registers them). */
const namesByText = new Map<string, string>();

export function nameStatement(text: string, name: string): void {
  namesByText.set(text, name);
}

/**
 * The pool's client (MikroORM's `driverOptions.Client`, src/lib/database.ts). Inside a
 * transaction statements reach `pg` through kysely as bare text and values; a text made by
 * `namedStatement` (src/db/named-statements.ts) goes as its named prepared statement, parsed
 * once per connection, as on the pool. Everything else passes through untouched.
 */
export class NamingClient extends pg.Client {
  /** Whether statements may be named (server-side prepared statements are session state). */
  protected named = true;
  /** Sent with every BEGIN, in its round trip: the transaction's own settings. */
  protected beginSettings = '';

  override query(config: any, values?: any, callback?: any): any {
    // Every statement passes the request's deadline guard (a stopped write's transaction sends
    // nothing but its ROLLBACK): src/lib/write-deadline.ts.
    const text = typeof config === 'string' ? config : config?.text;
    return guardStatement(this, text, () => this.send(config, values, callback), callback ?? values);
  }

  private send(config: any, values?: any, callback?: any): any {
    if (typeof config === 'string') {
      if (Array.isArray(values) && values.length > 0) {
        const name = this.named ? namesByText.get(config) : undefined;
        if (name) return super.query({ name, text: config, values }, callback);
      } else if (this.beginSettings && (config === 'begin' || config.startsWith('start transaction'))) {
        // No values: the simple protocol, which takes several statements in one message.
        return super.query(`${config}; ${this.beginSettings}`, values, callback);
      }
    } else if (!this.named && config?.name) {
      const { name: _unnamed, ...unnamed } = config;
      return super.query(unnamed, values, callback);
    }
    return super.query(config, values, callback);
  }
}

/**
 * The pool's client class for a connection mode (src/lib/session-url.ts). Direct: NamingClient,
 * its timeout a startup parameter (src/lib/database.ts). Through a transaction pooler, nothing
 * of the session is relied on: statements go unnamed unless the pooler keeps prepared
 * statements, and each transaction sets its own statement timeout in its BEGIN's round trip
 * (`set local` ends with the transaction, so it never reaches the pooler's next client).
 * Statements outside a transaction run under the role's or database's `statement_timeout`
 * (src/server/prove-connections.ts warns at start when there is none) and the client-side watchdog
 * (src/lib/stuck-queries.ts).
 */
export function poolClient(mode: ConnectionMode, statementTimeoutMs: number): typeof pg.Client {
  if (!mode.pooled) return NamingClient;
  const settings =
    statementTimeoutMs > 0 ? `set local statement_timeout = ${Math.floor(statementTimeoutMs)}` : '';
  return class PooledClient extends NamingClient {
    protected override named = mode.prepared;
    protected override beginSettings = settings;
  };
}
