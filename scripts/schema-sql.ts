/**
 * Prints the CREATE statements the entities imply (no database needed). The initial migration was
 * written from this output; later schema changes are new files in migrations/, listed in
 * migrations/index.ts, never schema:update at run time.
 */
import { MikroORM } from '@mikro-orm/postgresql';
import { ormConfig } from '../mikro-orm.config.ts';

const orm = await MikroORM.init(
  ormConfig('postgresql://postgres@127.0.0.1:5432/postgres', { connect: false } as never),
);
const sql = await orm.schema.getCreateSchemaSQL({ wrap: false });
console.log(sql);
await orm.close();
