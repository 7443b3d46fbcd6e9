import type { Scope } from '../../auth/scopes.ts';
import { entityNamed } from '../../entities/index.ts';
import { clinicRef } from '../clinic-ref.ts';
import { addressOf, phoneOf } from '../contact-input.ts';
import type { Resource } from '../resource.ts';
import { z } from '../write-input.ts';
import { createInputOf, updateInputOf, writtenFields } from '../write-inputs-of.ts';
import { defineWrite, type WriteContext } from '../writes.ts';
import { type CatalogList, catalogLists, ENTRY_GROUPS, nounText } from './catalog.ts';
import { type CatalogBody, catalogBodies } from './catalog-bodies.ts';

/**
 * Catalog writes (issue 16): create, change, disable and enable an entry of every catalog list,
 * at `/v1/catalog/<list>`, `<list>/{id}`, `<list>/{id}/disable` and `<list>/{id}/enable`. The
 * spec has no catalog event, so they record none. A disabled entry leaves its list and can no
 * longer be referenced by a new write (422), while what named it before keeps naming it, and a
 * read by id still finds it (docs/decisions.md: catalog writes).
 */
/**
 * The published bodies (openapi.json, schema.graphql) list the fields a creation must give, then
 * those it may leave to a default, then the clearable ones: the derived input, in that order.
 */
const RANK = { required: 0, 'required-nullable': 0, optional: 1, nullable: 2 } as const;
function inBodyOrder(resource: Resource, input: z.ZodObject): z.ZodObject {
  const rank = new Map(writtenFields(resource, 'create').map(([name, , , , mode]) => [name, RANK[mode]]));
  const names = Object.keys(input.shape).sort((a, b) => (rank.get(a) ?? 0) - (rank.get(b) ?? 0));
  return z.strictObject(Object.fromEntries(names.map((n) => [n, input.shape[n]])));
}

/** How a `byRun` field is stored: its column does not take the body's value as it is. */
const stored: Record<string, (w: WriteContext, v: any) => unknown> = {
  phone: (w, v) => phoneOf(w, v, 'phone'),
  address: (_w, v) => addressOf(v),
};

/**
 * What the mechanism does not store (w.insertFields, w.setFields store the plain columns): the
 * references, each checked, and the fields stored by a rule. A creation clears what it leaves out.
 */
async function apply(
  w: WriteContext,
  list: CatalogList,
  entry: any,
  input: Record<string, unknown>,
  phase: 'create' | 'update',
) {
  for (const [name, , field, write] of writtenFields(list.resource, phase)) {
    const { source } = field;
    if (source.kind !== 'ref' && !write.byRun) continue;
    const value = phase === 'create' ? (input[name] ?? null) : input[name];
    if (value === undefined) continue;
    if (source.kind === 'ref')
      entry[source.prop] =
        value === null ? null : await w.ref(entityNamed(source.target) as any, value as number, name);
    else if (source.kind === 'column') entry[source.prop] = stored[name](w, value);
  }
}

/** At start-up: every field the writes cannot store as given has its rule, or its default. */
function checkStored(list: CatalogList, body: CatalogBody) {
  const fail = (name: string, problem: string) => {
    throw new Error(`catalog ${list.noun}: ${name} ${problem}.`);
  };
  for (const phase of ['create', 'update'] as const)
    for (const [name, , field, write, mode] of writtenFields(list.resource, phase)) {
      const { source } = field;
      if (source.kind === 'join') fail(name, 'is a join: a catalog entry names another with f.ref');
      if (write.byRun && (source.kind !== 'column' || !stored[name]))
        fail(name, 'is stored by run, and catalog-writes.ts has no rule for it');
      const defaulted = source.kind === 'column' && source.prop in (body.defaults ?? {});
      if (phase === 'create' && mode === 'optional' && !field.nullable && !defaulted)
        fail(name, 'may be left out of a creation, and catalog-bodies.ts has no default for it');
    }
}

function defineCatalogWrites(list: CatalogList, body: CatalogBody) {
  const kind = list.resource.kind;
  const entity = entityNamed(kind);
  const noun = nounText(list);
  // Writing an entry answers it: a list that also needs vaccines:read to be read needs it here.
  const scopes: Scope[] = ['catalog:write', ...list.resource.scopes.filter((s) => s !== 'catalog:read')];
  const common = {
    tag: 'Catalog',
    scopes,
    resource: list.resource,
    groups: () => ENTRY_GROUPS,
    ...(list.veterinaryOnly ? { clinicKinds: ['veterinary'] as const } : {}),
  };
  const ids = { id: kind };
  checkStored(list, body);

  defineWrite({
    ...common,
    name: `create${list.noun}`,
    method: 'POST',
    path: list.path,
    status: 201,
    summary: `Add a ${noun}`,
    description: `Answers the new entry (detailed). Records no event: the spec has no catalog events.`,
    input: inBodyOrder(list.resource, createInputOf(list.resource)),
    example: body.example,
    async run(w, input) {
      const entry: any = w.em.create(entity, {
        clinic: clinicRef(w),
        disabledAt: null,
        ...body.defaults,
        ...w.insertFields(input),
      });
      await apply(w, list, entry, input, 'create');
      await w.em.flush();
      return entry.id;
    },
  });

  defineWrite({
    ...common,
    name: `update${list.noun}`,
    method: 'PATCH',
    path: `${list.path}/:id`,
    ids,
    status: 200,
    summary: `Change a ${noun}`,
    description:
      'Absent fields are kept, null clears a nullable one. A disabled entry can be changed too. Records no event.',
    input: inBodyOrder(list.resource, updateInputOf(list.resource)),
    example: Object.fromEntries(Object.entries(body.example).slice(0, 1)),
    async run(w, input, id) {
      const entry = await w.load(entity as any, kind, id);
      w.setFields(entry, input);
      await apply(w, list, entry, input, 'update');
      return (entry as any).id;
    },
  });

  for (const [verb, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    defineWrite({
      ...common,
      name: `${verb}${list.noun}`,
      method: 'POST',
      path: `${list.path}/:id/${verb}`,
      ids,
      status: 200,
      summary: `${verb === 'disable' ? 'Disable' : 'Enable again'} a ${noun}`,
      description: disabled
        ? `Takes the ${noun} out of its list and out of reach of new writes (naming it is then a 422); what named it keeps naming it, and GET by id still answers it with disabled_at set. Disabling a disabled entry changes nothing.`
        : `Puts a disabled ${noun} back in its list. Enabling an offered entry changes nothing.`,
      input: z.strictObject({}),
      example: {},
      async run(w, _input, id) {
        const entry: any = await w.load(entity as any, kind, id);
        if (disabled && !entry.disabledAt) entry.disabledAt = w.now;
        if (!disabled && entry.disabledAt) entry.disabledAt = null;
        return entry.id;
      },
    });
  }
}

for (const list of catalogLists) {
  const body = catalogBodies[list.noun];
  if (!body) throw new Error(`catalog ${list.noun}: no body definition in catalog-bodies.ts.`);
  defineCatalogWrites(list, body);
}
