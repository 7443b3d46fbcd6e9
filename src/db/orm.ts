import type { MikroORM } from '@mikro-orm/postgresql';
import { ormConfig } from '../../mikro-orm.config.ts';
import { type OrmOpenOptions, openOrmOf } from '../lib/database.ts';

/**
 * The server's MikroORM: the one configuration (mikro-orm.config.ts, its entities and
 * migrations) opened with the pool's timeouts (src/lib/database.ts). Here, above the entities,
 * so that lib, under them, never names them.
 */
export function openOrm(url: string, opts: OrmOpenOptions = {}): Promise<MikroORM> {
  return openOrmOf(ormConfig, url, opts);
}
