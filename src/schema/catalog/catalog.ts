import { allOf } from '../../auth/scopes.ts';
import type { RequestContext } from '../../lib/request-context.ts';
import { catalogLists, getCatalogEntry, listCatalog } from '../../services/catalog/catalog.ts';
import { RESPONSE_FORMATS } from '../../services/groups-params.ts';
import { builder } from '../builder.ts';
import { argsOn, type Face, withServiceArgs } from '../face-args.ts';
import { nodeType } from '../resource-types.ts';
import { restList, restOne } from '../shared.ts';

/**
 * Each catalog list (src/services/catalog/catalog.ts) is one Public field (a plain list) and one
 * Rest field (`{data: [...]}`), both over the same service call and the resource's scopes; each
 * entry is a node (`node(id:)`, disabled entries included) and a Rest object (GET by id).
 */
for (const list of catalogLists) {
  const type = nodeType(list.resource, (id, ctx) => getCatalogEntry(ctx, list, id));
  const authScopes = allOf(list.resource.scopes);
  const Body = restList(`${list.resource.name}List`, type);
  const args = (t: any, face: Face) =>
    argsOn(
      face,
      Object.fromEntries(
        Object.entries(list.filters ?? {}).map(([name, f]) => [
          name,
          t.arg.string({ required: false, ...(f.description ? { description: f.description } : {}) }),
        ]),
      ),
    );
  builder.queryFields((t) => ({
    [list.publicName]: t.field({
      type: [type],
      subGraphs: ['Public'],
      // Nullable, like every scope-guarded root field: a forbidden list does not null the others.
      nullable: true,
      authScopes,
      description: `${list.description} Disabled entries are left out.`,
      args: args(t, 'Public'),
      resolve: (_root: unknown, a: any, ctx: RequestContext) =>
        withServiceArgs(a, (filters) => listCatalog(ctx, list, filters)),
    }),
    [list.restName]: t.field({
      type: Body,
      subGraphs: ['Rest'],
      authScopes,
      description: `${list.description} Disabled entries are left out.`,
      args: {
        ...args(t, 'Rest'),
        response_format: t.arg.string({
          required: false,
          description: `${RESPONSE_FORMATS.join(' or ')}; detailed adds created_at, updated_at and disabled_at.`,
        }),
      },
      resolve: async (_root: unknown, a: any, ctx: RequestContext) => ({
        data: await listCatalog(ctx, list, a),
      }),
    }),
    [`get${list.noun}`]: t.field({
      type: restOne(`${list.resource.name}Body`, type),
      subGraphs: ['Rest'],
      authScopes,
      description: 'Disabled entries too (disabled_at set), in the detailed format.',
      args: { id: t.arg.string({ required: true }) },
      resolve: async (_root: unknown, a: any, ctx: RequestContext) => ({
        data: await getCatalogEntry(ctx, list, a.id),
      }),
    }),
  }));
}
