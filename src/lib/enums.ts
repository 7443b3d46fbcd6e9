import { enumNameOf } from './names.ts';

/**
 * A closed set of values, defined once with a description of each value: the REST `enum` of the
 * OpenAPI document (values as the spec spells them, `bank_transfer`), the GraphQL enum type
 * (`BANK_TRANSFER`, src/schema/enums.ts), the write bodies' zod check and the fields of the
 * resource definitions all come from it.
 */
export interface EnumSet<V extends string = string> {
  /** The GraphQL type name (PascalCase). */
  readonly name: string;
  readonly description: string;
  readonly values: readonly V[];
  /** Each value's meaning. */
  readonly meanings: Readonly<Record<V, string>>;
}

const registry: EnumSet[] = [];

export function defineEnum<const V extends string>(
  name: string,
  description: string,
  meanings: Record<V, string>,
): EnumSet<V> {
  if (registry.some((e) => e.name === name)) throw new Error(`enum ${name}: defined twice.`);
  const values = Object.keys(meanings) as V[];
  // One set, one type: a write body's z.enum finds its GraphQL enum by its values.
  const same = registry.find((e) => key(e.values) === key(values));
  if (same) throw new Error(`enum ${name}: the same values as ${same.name}; use that one.`);
  const names = new Set(values.map(enumNameOf));
  if (names.size !== values.length) throw new Error(`enum ${name}: two values map to one GraphQL name.`);
  const set: EnumSet<V> = { name, description, values, meanings };
  registry.push(set);
  return set;
}

const key = (values: readonly string[]) => [...values].sort().join('\u0000');

/** The defined set with exactly these values (a write body's z.enum), if there is one. */
export function enumWithValues(values: readonly string[]): EnumSet | undefined {
  const k = key(values);
  return registry.find((e) => key(e.values) === k);
}

export const allEnums = (): readonly EnumSet[] => registry;

/** The value a GraphQL enum name stands for (`CHAT_MESSAGE_SENT` → `chat.message.sent`): a client turning an answer back into REST's form. */
export function enumValueOf<V extends string>(set: EnumSet<V>, name: string): V | undefined {
  return set.values.find((v) => enumNameOf(v) === name);
}

const typedAs = new WeakMap<object, EnumSet>();

/**
 * Marks a write body's string schema as a value of `set` for GraphQL (an enum argument there),
 * where the body keeps its own check and refusal: the webhook's event_types answer REST a 422
 * naming the unknown type. Returns the schema. Kept beside the schema, not in its metadata,
 * which the OpenAPI document would show.
 */
export function valuesOf<T extends object>(set: EnumSet, schema: T): T {
  typedAs.set(schema, set);
  return schema;
}

export const enumTypedAs = (schema: object): EnumSet | undefined => typedAs.get(schema);
