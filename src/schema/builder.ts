import SchemaBuilder from '@pothos/core';
import ComplexityPlugin from '@pothos/plugin-complexity';
import RelayPlugin from '@pothos/plugin-relay';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import SubGraphPlugin from '@pothos/plugin-sub-graph';
import { mayReach, refusal } from '../auth/access.ts';
import { allOf, type FieldScopes, forbidden, type Scope } from '../auth/scopes.ts';
import { AppError } from '../lib/errors.ts';
import { kindOfId } from '../lib/ids.ts';
import type { RequestContext } from '../lib/request-context.ts';
import { catalogLists } from '../services/catalog/catalog.ts';
import { Patient } from '../services/patients/patient.resource.ts';
import { defaultFieldCost, isCosting } from './cost.ts';

/**
 * What node(id:) can load, by id kind: the typename and the scope the key needs.
 */
const nodeTypes: Record<string, { typename: string; scope: Scope | readonly Scope[] }> = {
  // Every catalog entry, disabled or not; vaccines and measurements need their own scope too.
  ...Object.fromEntries(
    catalogLists.map((l) => [l.resource.kind, { typename: l.resource.name, scope: l.resource.scopes }]),
  ),
  Patient: { typename: Patient.name, scope: Patient.scopes[0] },
  Appointment: { typename: 'Appointment', scope: 'appointments:read' },
  Treatment: { typename: 'Treatment', scope: 'treatments:read' },
  Payment: { typename: 'Payment', scope: 'payments:read' },
  Call: { typename: 'Call', scope: 'calls:read' },
  Owner: { typename: 'Client', scope: 'patients:read' },
  Conversation: { typename: 'Conversation', scope: 'chat:read' },
  InboundMessage: { typename: 'Message', scope: 'chat:read' },
  OutboundMessage: { typename: 'Message', scope: 'chat:read' },
  Event: { typename: 'Event', scope: 'webhooks:manage' },
  WebhookSubscription: { typename: 'WebhookSubscription', scope: 'webhooks:manage' },
};

/** The scopes of every `reach` that failed in a scope-auth failure, in order, once each. */
function neededIn(failure: any, out: Scope[] = []): Scope[] {
  if (!failure) return out;
  if (failure.scope === 'reach')
    for (const s of failure.parameter as Scope[]) if (!out.includes(s)) out.push(s);
  for (const f of failure.failures ?? []) neededIn(f, out);
  return out;
}

/**
 * The one Pothos builder. Two sub-graphs come out of it: Public (served at /graphql) and Rest
 * (shaped like the /v1 responses, consumed only by SOFA). Object types are shared, with the
 * REST field names, so a GraphQL object and its REST resource are the same JSON.
 */
export const builder = new SchemaBuilder<{
  Context: RequestContext;
  AuthScopes: FieldScopes;
  /** Sandbox: the sandbox network's mutations, in the Public schema, for test clinics' keys (docs/test-mode.md). */
  SubGraphs: 'Public' | 'Rest' | 'Sandbox';
  DefaultFieldNullability: false;
  Scalars: {
    /** Lenient REST parameters: the services validate them and answer 422, never a 400 from coercion. */
    Limit: { Input: unknown; Output: number };
    CommaList: { Input: unknown; Output: string };
    JSON: { Input: unknown; Output: unknown };
  };
}>({
  defaultFieldNullability: false,
  plugins: [ScopeAuthPlugin, RelayPlugin, SubGraphPlugin, ComplexityPlugin],
  // Costs only (src/schema/cost.ts): the limit is checked once per operation, before it runs,
  // for REST and GraphQL alike, not by the plugin's per-root-field wrapper.
  complexity: { fieldComplexity: defaultFieldCost as any, disabled: true },
  scopeAuth: {
    authorizeOnSubscribe: true,
    // Scopes sit on fields only: every field that returns a record type names the record's scope
    // (test/scopes.test.ts holds every field to that). Type-level scopes would wrap every field
    // of every row (a third of a REST page's resolver time), and runScopesOnType checks through
    // isTypeOf, which graphql-jit calls without a context.
    // One scope loader: a field's `allOf` scopes, decided by src/auth/access.ts as REST decides them.
    authScopes: (ctx) => ({ reach: (needed: readonly Scope[]) => mayReach(ctx.principal, needed) }),
    // Names every scope the key lacks for this field (access.ts, the same 403 as REST's).
    unauthorizedError: (_parent, ctx, _info, result) =>
      refusal(ctx.principal, neededIn((result as any).failure)) ?? forbidden([]),
  },
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    // The REST id is the node id: no base64 global ids.
    encodeGlobalID: (_typename: string, id: string | number | bigint) => String(id),
    decodeGlobalID: (globalID: string, ctx: unknown) => {
      const parsed = kindOfId(globalID);
      const typename = parsed ? nodeTypes[parsed.kind]?.typename : undefined;
      if (!typename && isCosting(ctx)) return { typename: Patient.name, id: globalID };
      if (!typename) throw new AppError('not_found', `No object with id '${globalID}'.`);
      return { typename, id: globalID };
    },
    nodeQueryOptions: {
      subGraphs: ['Public'],
      description:
        "The object with this id, whatever its type (`pat_12`, `evt_3`): null with a `not_found` error when there is none, as for another clinic's id; a `forbidden` one when the key lacks the type's scope.",
      args: { id: { description: 'The id, as REST and every `id` field give it (`pat_12`).' } },
      // The scope of the kind of object asked for (the id arrives decoded by decodeGlobalID).
      authScopes: (_root: unknown, args: { id: { typename: string } }) => {
        const scope = Object.values(nodeTypes).find((t) => t.typename === args.id.typename)?.scope;
        return scope ? allOf(typeof scope === 'string' ? [scope] : scope) : false;
      },
    } as any,
    nodesQueryOptions: false,
    nodeTypeOptions: {
      subGraphs: ['Public'],
      description: 'An object with an id that `node(id:)` loads.',
    },
    idFieldOptions: { description: 'The id, the same string REST gives (`pat_12`): no base64 global ids.' },
    pageInfoTypeOptions: {
      subGraphs: ['Public'],
      description: 'Where a page stands in its list. Pages run forward only (`first`, `after`).',
    },
    hasNextPageFieldOptions: {
      description: 'Whether a page follows this one: ask for it with `after: endCursor`.',
    },
    hasPreviousPageFieldOptions: { description: 'Always false: pages run forward only.' },
    startCursorFieldOptions: { description: "The first edge's cursor; null on an empty page." },
    endCursorFieldOptions: {
      description:
        "The cursor to pass as `after` for the next page (the last edge's); null on an empty page.",
    },
    defaultConnectionTypeOptions: { subGraphs: ['Public'] },
    defaultEdgeTypeOptions: { subGraphs: ['Public'] },
    // Each resolves to its parent's property of its own name: read inline where documents run
    // (src/schema/execution-schema.ts), not as a call per edge.
    edgesFieldOptions: {
      description: "This page's items, each with its cursor.",
      extensions: { inline: true },
    },
    pageInfoFieldOptions: {
      description: 'Whether more pages follow, and the cursor to fetch the next one.',
      extensions: { inline: true },
    },
    nodeFieldOptions: { description: 'The item.', extensions: { inline: true } },
    cursorFieldOptions: { description: 'Pass as `after` for the items that follow this one.' },
  },
  subGraphs: {
    defaultForTypes: ['Public', 'Rest'],
    fieldsInheritFromTypes: true,
  },
});

builder.scalarType('Limit', {
  description: 'Page size, an integer from 1 to 100 (default 25).',
  serialize: (v) => v as number,
  parseValue: (v) => v,
});

builder.scalarType('CommaList', {
  description: 'Comma-separated values, e.g. owner,species.',
  serialize: (v) => String(v),
  parseValue: (v) => v,
});

builder.scalarType('JSON', {
  description: 'Any JSON value.',
  serialize: (v) => v,
  parseValue: (v) => v,
});

builder.queryType({
  description: "Reads, all within the API key's clinic; each field needs the scope of what it reads.",
});
