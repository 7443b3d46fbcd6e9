import { z } from 'zod';
import { enumTypedAs, enumWithValues } from '../lib/enums.ts';
import { camelOf } from '../lib/names.ts';
import { builder } from './builder.ts';
import { enumTypeOf } from './enums.ts';

/**
 * GraphQL input types derived from a write's body definition (src/services/write-input.ts): the
 * same fields in camelCase (src/lib/names.ts), nesting, lists and required fields; a closed set
 * is its enum (src/lib/enums.ts). Values are checked by the same zod definition afterwards, on
 * the REST body `bodyOfInput` makes of them.
 */
const made = new Map<string, any>();

type Def = {
  type: string;
  innerType?: z.ZodType;
  element?: z.ZodType;
  in?: z.ZodType;
  shape?: any;
  entries?: Record<string, string>;
};
const defOf = (t: z.ZodType): Def => (t as any)._zod.def;

/**
 * Unwraps optional, nullable and default; whether the field may be left out. A string marked as
 * a closed set's value on the way (`valuesOf`, src/lib/enums.ts) comes out as that set's enum.
 */
function unwrap(t: z.ZodType): { inner: z.ZodType; optional: boolean } {
  let inner = t;
  let optional = false;
  for (;;) {
    const typed = enumTypedAs(inner);
    if (typed) return { inner: z.enum(typed.values as [string, ...string[]]), optional };
    const d = defOf(inner);
    if (d.type === 'optional' || d.type === 'nullable' || d.type === 'default') {
      optional = true;
      inner = d.innerType as z.ZodType;
    } else if (d.type === 'pipe') inner = d.in as z.ZodType;
    else return { inner, optional };
  }
}

/**
 * A field's text: the outermost `.meta({description})` through its wrappers, as the OpenAPI body
 * takes it (`idOf(...).optional().meta(...)` over idOf's own "A … id"), so both faces say the same.
 */
function descriptionOf(t: z.ZodType): string | undefined {
  let cur: z.ZodType | undefined = t;
  while (cur) {
    const text = ((cur as any).meta?.() as { description?: string } | undefined)?.description;
    if (text) return text;
    const d = defOf(cur);
    cur = (
      ['optional', 'nullable', 'default'].includes(d.type)
        ? d.innerType
        : d.type === 'pipe'
          ? d.in
          : undefined
    ) as z.ZodType | undefined;
  }
  return undefined;
}

function enumOf(d: Def, name: string): any {
  const values = Object.values(d.entries ?? {});
  const set = enumWithValues(values);
  if (!set)
    throw new Error(
      `${name}: z.enum([${values.join(', ')}]) is no defined set; define it with defineEnum (src/lib/enums.ts).`,
    );
  return enumTypeOf(set);
}

/**
 * `about`: what the value is, for a nested input type's description (the field's own text for an
 * object, else where it sits): every input type is described, as the schema linter requires.
 */
function typeOf(t: z.ZodType, name: string, about: string): any {
  const d = defOf(t);
  switch (d.type) {
    case 'enum':
      return enumOf(d, name);
    case 'string':
    case 'literal':
      return 'String';
    case 'boolean':
      return 'Boolean';
    case 'number':
      return (t as any).isInt ? 'Int' : 'Float';
    case 'array':
      // An item's type is named for one item: `contacts` holds CreatePatientContactInput.
      return [
        typeOf(
          unwrap(d.element as z.ZodType).inner,
          name.replace(/([^s])s(Input)$/, '$1$2'),
          `One item of ${about}`,
        ),
      ];
    case 'object':
      return inputOf(t as z.ZodObject, name, undefined, about);
    default:
      return 'JSON';
  }
}

/**
 * The input type `name` of a body definition (made once per name). `extra`: the fields a
 * mutation takes beside the body (its ids, idempotencyKey, expectedUpdatedAt: src/schema/writes.ts).
 */
export function inputOf(
  schema: z.ZodObject,
  name: string,
  extra?: (t: any) => Record<string, any>,
  description?: string,
): any {
  const known = made.get(name);
  if (known) return known;
  const ref = builder.inputType(name, {
    ...(description ? { description } : {}),
    fields: (t) => {
      const body = Object.fromEntries(
        Object.entries(schema.shape).map(([field, def]) => {
          const { inner, optional } = unwrap(def as z.ZodType);
          const camel = camelOf(field);
          const description = descriptionOf(def as z.ZodType);
          return [
            camel,
            t.field({
              type: typeOf(
                inner,
                `${name.replace(/Input$/, '')}${camel[0].toUpperCase()}${camel.slice(1)}Input`,
                defOf(inner).type === 'object' && description ? description : `\`${camel}\` of ${name}.`,
              ),
              required: !optional,
              ...(description ? { description } : {}),
            }),
          ];
        }),
      );
      const more = extra?.(t) ?? {};
      const clash = Object.keys(more).find((k) => k in body);
      if (clash) throw new Error(`${name}: the body has a field ${clash}, which the mutation takes itself.`);
      return { ...more, ...body };
    },
  });
  made.set(name, ref);
  return ref;
}

/**
 * A GraphQL input as the REST body of the same write: camelCase names back to the body's own,
 * by the body definition (a JSON value inside is left as it is); fields left out are absent,
 * explicit nulls kept (PATCH: null clears).
 */
export function bodyOfInput(input: unknown, schema: z.ZodType): unknown {
  if (input == null) return input;
  const { inner } = unwrap(schema);
  const d = defOf(inner);
  if (d.type === 'array' && Array.isArray(input))
    return input.map((v) => bodyOfInput(v, d.element as z.ZodType));
  if (d.type === 'object' && typeof input === 'object') {
    const out: Record<string, any> = {};
    const given = input as Record<string, any>;
    for (const [field, def] of Object.entries((inner as z.ZodObject).shape)) {
      const v = given[camelOf(field)];
      if (v !== undefined) out[field] = bodyOfInput(v, def as z.ZodType);
    }
    return out;
  }
  return input;
}
