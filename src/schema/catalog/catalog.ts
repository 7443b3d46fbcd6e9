import { allOf } from '../../auth/scopes.ts';
import type { RequestContext } from '../../lib/request-context.ts';
import { catalogLists, listCatalog } from '../../services/catalog/catalog.ts';
import { builder } from '../builder.ts';
import { objectType } from '../resource-types.ts';
import { restList } from '../shared.ts';

/**
 * Each catalog list (src/services/catalog/catalog.ts) is one Public field (a plain list) and one
 * Rest field (`{data: [...]}`), both over the same service call and the resource's scopes.
 */
for (const list of catalogLists) {
  const type = objectType(list.resource);
  const authScopes = allOf(list.resource.scopes);
  const Body = restList(`${list.resource.name}List`, type);
  const args = (t: any) =>
    Object.fromEntries(
      Object.entries(list.filters ?? {}).map(([name, f]) => [
        name,
        t.arg.string({ required: false, ...(f.description ? { description: f.description } : {}) }),
      ]),
    );
  builder.queryFields((t) => ({
    [list.publicName]: t.field({
      type: [type],
      subGraphs: ['Public'],
      // Nullable, like every scope-guarded root field: a forbidden list does not null the others.
      nullable: true,
      authScopes,
      description: list.description,
      args: args(t),
      resolve: (_root: unknown, a: any, ctx: RequestContext) => listCatalog(ctx, list, a),
    }),
    [list.restName]: t.field({
      type: Body,
      subGraphs: ['Rest'],
      authScopes,
      description: list.description,
      args: args(t),
      resolve: async (_root: unknown, a: any, ctx: RequestContext) => ({
        data: await listCatalog(ctx, list, a),
      }),
    }),
  }));
}
