import type { Scope } from '../../auth/scopes.ts';
import { entityNamed } from '../../entities/index.ts';
import { clinicRef } from '../clinic-ref.ts';
import { addressOf, phoneOf } from '../contact-input.ts';
import { clearable, z } from '../write-input.ts';
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
const mapValues = (o: Record<string, z.ZodType> | undefined, fn: (t: z.ZodType) => z.ZodType) =>
  Object.fromEntries(Object.entries(o ?? {}).map(([k, t]) => [k, fn(t)]));

const createInputOf = (b: CatalogBody) =>
  z.strictObject({
    ...b.required,
    ...mapValues(b.optional, (t) => t.optional()),
    ...mapValues(b.clearable, clearable),
  });

const updateInputOf = (b: CatalogBody) =>
  z.strictObject({
    ...mapValues(b.required, (t) => t.optional()),
    ...mapValues(b.optional, (t) => t.optional()),
    ...mapValues(b.clearable, clearable),
  });

/** How a value is stored where the column does not take the body's value as it is. */
const stored: Record<string, (w: WriteContext, v: any) => unknown> = {
  phone: (w, v) => phoneOf(w, v, 'phone'),
  address: (_w, v) => addressOf(v),
};

/** Sets each given field where the resource definition says it comes from: a column or a relation. */
async function apply(w: WriteContext, list: CatalogList, entry: any, input: Record<string, unknown>) {
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined) continue;
    const source = list.resource.fields[key]?.source;
    if (source?.kind === 'ref')
      entry[source.prop] =
        value === null ? null : await w.ref(entityNamed(source.target) as any, value as number, key);
    else if (source?.kind === 'column') entry[source.prop] = stored[key] ? stored[key](w, value) : value;
    else throw new Error(`catalog ${list.noun}: body field ${key} has no column in the resource.`);
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
  const nullable = Object.fromEntries(Object.keys(body.clearable ?? {}).map((k) => [k, null]));

  defineWrite({
    ...common,
    name: `create${list.noun}`,
    method: 'POST',
    path: list.path,
    status: 201,
    summary: `Add a ${noun}`,
    description: `Answers the new entry (detailed). Records no event: the spec has no catalog events.`,
    input: createInputOf(body),
    example: body.example,
    async run(w, input) {
      const entry: any = w.em.create(entity, { clinic: clinicRef(w), disabledAt: null, ...body.defaults });
      for (const key of Object.keys(nullable)) entry[(list.resource.fields[key].source as any).prop] = null;
      await apply(w, list, entry, input);
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
    input: updateInputOf(body),
    example: Object.fromEntries(Object.entries(body.example).slice(0, 1)),
    async run(w, input, id) {
      const entry = await w.load(entity as any, kind, id);
      await apply(w, list, entry, input);
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
