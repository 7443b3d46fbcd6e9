import type { z } from 'zod';
import { builder } from './builder.ts';

/**
 * GraphQL input types derived from a write's body definition (src/services/write-input.ts):
 * same field names, nesting, lists and required fields. Values are checked by the same zod
 * definition afterwards, so an enum is a String here and its allowed values are the 422's.
 */
const made = new Map<string, any>();

type Def = { type: string; innerType?: z.ZodType; element?: z.ZodType; in?: z.ZodType; shape?: any };
const defOf = (t: z.ZodType): Def => (t as any)._zod.def;

/** Unwraps optional, nullable and default; whether the field may be left out. */
function unwrap(t: z.ZodType): { inner: z.ZodType; optional: boolean } {
  let inner = t;
  let optional = false;
  for (;;) {
    const d = defOf(inner);
    if (d.type === 'optional' || d.type === 'nullable' || d.type === 'default') {
      optional = true;
      inner = d.innerType as z.ZodType;
    } else if (d.type === 'pipe') inner = d.in as z.ZodType;
    else return { inner, optional };
  }
}

const descriptionOf = (t: z.ZodType): string | undefined =>
  ((t as any).meta?.() as { description?: string } | undefined)?.description;

function typeOf(t: z.ZodType, name: string): any {
  const d = defOf(t);
  switch (d.type) {
    case 'string':
    case 'enum':
    case 'literal':
      return 'String';
    case 'boolean':
      return 'Boolean';
    case 'number':
      return (t as any).isInt ? 'Int' : 'Float';
    case 'array':
      return [typeOf(unwrap(d.element as z.ZodType).inner, name)];
    case 'object':
      return inputOf(t as z.ZodObject, name);
    default:
      return 'JSON';
  }
}

/** The input type `name` of a body definition (made once per name). */
export function inputOf(schema: z.ZodObject, name: string): any {
  const known = made.get(name);
  if (known) return known;
  const ref = builder.inputType(name, {
    fields: (t) =>
      Object.fromEntries(
        Object.entries(schema.shape).map(([field, def]) => {
          const { inner, optional } = unwrap(def as z.ZodType);
          const camel = field.replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase());
          const description = descriptionOf(def as z.ZodType) ?? descriptionOf(inner);
          return [
            field,
            t.field({
              type: typeOf(inner, `${name.replace(/Input$/, '')}${camel}Input`),
              required: !optional,
              ...(description ? { description } : {}),
            }),
          ];
        }),
      ),
  });
  made.set(name, ref);
  return ref;
}

/** GraphQL arguments as a JSON body: fields left out are absent, explicit nulls kept (PATCH: null clears). */
export function bodyOfInput(input: unknown): unknown {
  if (Array.isArray(input)) return input.map(bodyOfInput);
  if (input && typeof input === 'object')
    return Object.fromEntries(
      Object.entries(input)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => [k, bodyOfInput(v)]),
    );
  return input;
}
