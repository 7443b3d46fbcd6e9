import { Migrator } from '@mikro-orm/migrations';
import { DataloaderType, defineConfig, type Options } from '@mikro-orm/postgresql';
import { migrationsList } from './migrations/index.ts';
import { allEntities, tenantEntities } from './src/entities/index.ts';

/** The one MikroORM configuration: app, CLI and tests all build theirs here. */
export function ormConfig(clientUrl: string, overrides: Partial<Options> = {}): Options {
  return defineConfig({
    clientUrl,
    entities: allEntities,
    extensions: [Migrator],
    migrations: {
      migrationsList,
      path: 'migrations',
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      silent: true,
    },
    filters: {
      // Every query on a tenant-owned entity is limited to the clinic of the request's API key.
      // With no clinic set, MikroORM refuses the query: forgetting the scope fails loudly.
      tenant: {
        cond: (args: Record<string, unknown>) => ({ clinic: args.clinicId }),
        entity: tenantEntities.map((e) => e.name),
        default: true,
      },
    },
    // The tenant filter is not a soft delete: a row never points at another clinic's row (the
    // services check every id under the filter before writing one), so joining every M:1 target
    // only to re-apply it would add a join per relation and most of the planning time.
    autoJoinRefsForFilters: false,
    dataloader: DataloaderType.ALL,
    forceUtcTimezone: true,
    pool: { min: 0, max: 10 },
    ...overrides,
  });
}

export default ormConfig(process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/clinic_gateway');
