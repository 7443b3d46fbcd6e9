import pg from 'pg';
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
  override query(config: any, values?: any, callback?: any): any {
    // Every statement passes the request's deadline guard (a stopped write's transaction sends
    // nothing but its ROLLBACK): src/lib/write-deadline.ts.
    const text = typeof config === 'string' ? config : config?.text;
    return guardStatement(this, text, () => this.send(config, values, callback), callback ?? values);
  }

  private send(config: any, values?: any, callback?: any): any {
    if (typeof config === 'string' && Array.isArray(values)) {
      const name = namesByText.get(config);
      if (name) return super.query({ name, text: config, values }, callback);
    }
    return super.query(config, values, callback);
  }
}
