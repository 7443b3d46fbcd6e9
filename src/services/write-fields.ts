import type { Resource } from './resource.ts';
import type { WriteContext } from './write-definition.ts';
import { writtenFields } from './write-inputs-of.ts';

/**
 * The plain columns of a resource that the mechanism stores for a write's `run`: the fields with
 * a `write` whose source is a column and whose value is stored as the body gives it (not
 * `byRun`). References and anything with a rule stay in `run`, so a new plain field needs no
 * edit there.
 */
type PlainField = { input: string; prop: string; nullable: boolean };
/** Worked out once per resource and phase: the booking, the write called most, asks every time. */
const plainOf = new WeakMap<Resource, Record<'create' | 'update', PlainField[]>>();
const plainFields = (resource: Resource, phase: 'create' | 'update'): PlainField[] => {
  let known = plainOf.get(resource);
  if (!known) {
    const of = (p: 'create' | 'update') =>
      writtenFields(resource, p).flatMap(([input, , field, w]) =>
        field.source.kind === 'column' && !w.byRun
          ? [{ input, prop: field.source.prop, nullable: Boolean(field.nullable) }]
          : [],
      );
    known = { create: of('create'), update: of('update') };
    plainOf.set(resource, known);
  }
  return known[phase];
};

export function fieldSetter(resource: Resource): Pick<WriteContext, 'setFields' | 'insertFields'> {
  return {
    setFields(entity, input) {
      const given = input as Record<string, unknown>;
      const target = entity as Record<string, unknown>;
      for (const phase of ['create', 'update'] as const)
        for (const { input: name, prop } of plainFields(resource, phase))
          if (given[name] !== undefined) target[prop] = given[name];
    },
    insertFields(input) {
      const given = input as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const { input: name, prop, nullable } of plainFields(resource, 'create')) {
        // A non-null field a create may leave out has a default `run` gives (insertRow names it if not).
        if (given[name] !== undefined) out[prop] = given[name];
        else if (nullable) out[prop] = null;
      }
      return out;
    },
  };
}
