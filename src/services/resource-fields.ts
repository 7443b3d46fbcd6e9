import type { z } from 'zod';
import type { Scope } from '../auth/scopes.ts';
import type { EnumSet } from '../lib/enums.ts';
import type { IdKind } from '../lib/ids.ts';
import { isMappableName } from '../lib/names.ts';
import { isoOf } from '../lib/timestamps.ts';

/**
 * The field constructors and the definitions of shapes and resources (./resource.ts says what
 * follows from them).
 *
 * A row is what MikroORM's lean reads return (db/lean.ts): entity property names, to-one
 * relations as nested objects (`{id}` when not joined), points in time as ISO text.
 */
export type Row = Record<string, any>;

export type Scalar = 'ID' | 'String' | 'Int' | 'Float' | 'Boolean' | 'JSON';
export type FieldType = Scalar | Shape | readonly [Scalar] | readonly [Shape];

/**
 * Which REST responses carry a field: `core` always, `detailed` with response_format=detailed,
 * `include:<name>` with include=<name>. GraphQL offers every field; the client selects.
 */
export type Group = 'core' | 'detailed' | `include:${string}`;

/** What presenting needs to know of the caller: phones are shown in the clinic's local form. */
export interface PresentContext {
  country: string;
}

export type Source =
  /**
   * The row's primary key as a public id of the shape's kind; or, with `format`, an id made from
   * the row and the columns it `needs` (messages: `in_<n>` or `out_<n>` by direction).
   */
  | { kind: 'id'; needs?: readonly string[]; format?: (row: Row) => string }
  /** A column of the row's entity. */
  | { kind: 'column'; prop: string }
  /** A to-one relation's id, as the public id of `target`. */
  | { kind: 'ref'; prop: string; target: IdKind }
  /** A to-one relation, joined and presented with `shape`. `fromParent`: lists attach the parent record instead. */
  | { kind: 'join'; prop: string; target: IdKind; fromParent?: boolean }
  /** A key of an embedded JSON value (fields of shapes used through `json`). */
  | { kind: 'key'; key: string }
  /** A function of other columns of the row. */
  | { kind: 'derived'; needs: readonly string[] };

export interface Field {
  readonly type: FieldType;
  readonly nullable: boolean;
  readonly group: Group;
  readonly description?: string;
  readonly source: Source;
  /** The stored value → the output value (nested shapes are presented by the caller). */
  readonly convert?: (value: any, pc: PresentContext, row: Row) => unknown;
  /** json(): the value when the stored one is null (instead of null). */
  readonly whenNull?: () => unknown;
  /** What null means, for the documentation of a nullable field of an include group. */
  readonly nullMeans?: string;
  /** A String field's closed set of values: a GraphQL enum and the OpenAPI `enum`. */
  readonly enum?: EnumSet;
  /** Which writes take it and its input rule; absent: only the service sets it. */
  readonly write?: FieldWrite;
}

/**
 * Where a field may be written (docs/adding-a-resource.md). The create and update inputs are
 * derived from these (./write-inputs-of.ts): a join's input is `<name>_id`, any other field's its
 * own name; a plain column is stored by the mechanism (WriteContext.setFields, .insertFields).
 */
export interface FieldWrite<T extends z.ZodType = z.ZodType> {
  /** The writes whose input takes it: the create, the update (a PATCH), or both. */
  readonly on: 'create' | 'update' | 'both';
  /** The value's rule, without optional or null: its check, and its text where it has none below. */
  readonly input: T;
  /** The input's text, outside its optional and null (both faces show it for the field). */
  readonly description?: string;
  /**
   * How a create takes it, when not as the field's nullability says (a non-null field is
   * required, a nullable one optional and null allowed): `optional` for a value the service
   * defaults (or a null not taken), `required` for a nullable field a create must give,
   * `required-nullable` for one it must give and may give as null (a withheld caller's number).
   */
  readonly create?: 'required' | 'optional' | 'nullable' | 'required-nullable';
  /** `optional`: a nullable field an update may change but not clear (null is refused). */
  readonly update?: 'optional' | 'nullable';
  /** `run` stores it (a rule, a conversion, columns kept beside it); else the mechanism does. */
  readonly byRun?: true;
  /**
   * For a resource written by several kinds of write (a Patient row is a dental patient or an
   * animal): the kinds whose input takes it (createInputOf's `kind`); absent, every kind's.
   */
  readonly kinds?: readonly string[];
  /** The input's name when a published contract names it otherwise (an animal's `owner` is `client_id`). */
  readonly name?: string;
}

export interface Shape {
  readonly name: string;
  readonly description?: string;
  readonly fields: Readonly<Record<string, Field>>;
}

/** A shape stored as rows of an entity: a record with an id of its own. */
export interface Resource extends Shape {
  /** The id prefix; also the name of the MikroORM entity its rows come from. */
  readonly kind: IdKind;
  /** The scopes a key needs to reach these records; empty for shapes only ever embedded. */
  readonly scopes: readonly Scope[];
}

interface FieldOpts {
  nullable?: boolean;
  group?: Group;
  description?: string;
  nullMeans?: string;
  enum?: EnumSet;
  write?: FieldWrite;
}

/**
 * The constructors keep their options' literal types (`nullable: true`, `write: {on: 'both', …}`)
 * in the field's type, so the derived inputs are typed (./write-inputs-of.ts).
 */
type Made<O> = Field & O;
/** A join is written as `<name>_id`. */
export type JoinField = Field & { readonly idInput: true };

/** Field constructors; each names where its value comes from. */
export const f = {
  id: (
    opts: { description?: string; needs?: readonly string[]; format?: (row: Row) => string } = {},
  ): Field => {
    const { needs, format, ...rest } = opts;
    return {
      type: 'ID',
      nullable: false,
      group: 'core',
      source: format ? { kind: 'id', needs: needs ?? [], format } : { kind: 'id' },
      ...rest,
    };
  },
  column: <const O extends FieldOpts = Record<never, never>>(
    prop: string,
    type: Scalar | readonly [Scalar],
    opts: O & { convert?: Field['convert'] } = {} as O,
  ): Made<O> => ({ type, nullable: false, group: 'core', source: { kind: 'column', prop }, ...opts }),
  /** A point in time, as ISO 8601 text. */
  time: <const O extends FieldOpts = Record<never, never>>(prop: string, opts: O = {} as O): Made<O> => ({
    type: 'String',
    nullable: false,
    group: 'core',
    source: { kind: 'column', prop },
    convert: (v) => (v == null ? null : isoOf(v)),
    ...opts,
  }),
  ref: <const O extends FieldOpts = Record<never, never>>(
    prop: string,
    target: IdKind,
    opts: O = {} as O,
  ): Made<O> => ({
    type: 'String',
    nullable: false,
    group: 'core',
    source: { kind: 'ref', prop, target },
    ...opts,
  }),
  join: <const O extends FieldOpts & { fromParent?: boolean } = Record<never, never>>(
    prop: string,
    target: IdKind,
    shape: Shape,
    opts: O = {} as O,
  ): Made<Omit<O, 'fromParent'>> & JoinField => {
    const { fromParent, ...rest } = opts;
    return {
      type: shape,
      nullable: false,
      group: 'core',
      source: { kind: 'join', prop, target, ...(fromParent ? { fromParent } : {}) },
      idInput: true,
      ...rest,
    } as Made<Omit<O, 'fromParent'>> & JoinField;
  },
  /** A JSON column presented through `shape` (or a list of them). */
  json: <const O extends FieldOpts & { whenNull?: () => unknown } = Record<never, never>>(
    prop: string,
    shape: Shape | readonly [Shape],
    opts: O = {} as O,
  ): Made<O> => ({ type: shape, nullable: false, group: 'core', source: { kind: 'column', prop }, ...opts }),
  key: (key: string, type: Scalar, opts: FieldOpts = {}): Field => ({
    type,
    nullable: false,
    group: 'core',
    source: { kind: 'key', key },
    ...opts,
  }),
  derived: <const O extends FieldOpts = Record<never, never>>(
    needs: readonly string[],
    type: FieldType,
    get: (row: Row, pc: PresentContext) => unknown,
    opts: O = {} as O,
  ): Made<O> => ({
    type,
    nullable: false,
    group: 'core',
    source: { kind: 'derived', needs },
    convert: (_v, pc, row) => get(row, pc),
    ...opts,
  }),
};

const registry: Shape[] = [];

function checkFields(name: string, fields: Record<string, Field>) {
  // One name, one GraphQL type and one OpenAPI schema.
  if (registry.some((s) => s.name === name)) throw new Error(`resource ${name}: defined twice.`);
  for (const [field, def] of Object.entries(fields)) {
    const where = `${name}.${field}`;
    if (!def || typeof def !== 'object' || !def.source || typeof def.source.kind !== 'string')
      throw new Error(`resource ${where}: a field needs a source (f.column, f.join, f.derived, ...).`);
    if (def.type === undefined) throw new Error(`resource ${where}: a field needs a type.`);
    // GraphQL's camelCase name is derived from it (src/lib/names.ts) and must map back.
    if (!isMappableName(field))
      throw new Error(`resource ${where}: field names are snake_case words (first_name, address_line1).`);
    if (def.enum && def.type !== 'String' && !(Array.isArray(def.type) && def.type[0] === 'String'))
      throw new Error(`resource ${where}: an enum field is a String or a list of them.`);
    // A derived field is written only by `run`, which knows the columns behind it.
    if (
      def.write &&
      !['column', 'ref', 'join'].includes(def.source.kind) &&
      !(def.source.kind === 'derived' && def.write.byRun)
    )
      throw new Error(
        `resource ${where}: only a column, a ref or a join is written (write:), or a derived field with byRun.`,
      );
  }
}

/** An embedded object: a reference inside a resource, or the shape of a JSON column. */
export function defineShape(name: string, fields: Record<string, Field>, description?: string): Shape {
  checkFields(name, fields);
  const shape: Shape = { name, fields, ...(description ? { description } : {}) };
  registry.push(shape);
  return shape;
}

/** A resource whose fields keep their types (what the derived inputs are typed from). */
export type ResourceOf<F extends Record<string, Field>> = Resource & { readonly fields: F };

export function defineResource<const F extends Record<string, Field>>(def: {
  name: string;
  kind: IdKind;
  scopes: readonly Scope[];
  description?: string;
  fields: F;
}): ResourceOf<F> {
  checkFields(def.name, def.fields);
  if (def.fields.id?.source.kind !== 'id') throw new Error(`resource ${def.name}: needs an f.id() field.`);
  const resource: ResourceOf<F> = { ...def };
  registry.push(resource);
  return resource;
}

export const isResource = (s: Shape): s is Resource => 'kind' in s;

/** Every shape and resource defined so far (they are defined when their modules load). */
export const allShapes = (): readonly Shape[] => registry;

export const shapeOf = (t: FieldType): Shape | undefined => {
  const inner = Array.isArray(t) ? t[0] : t;
  return typeof inner === 'object' ? (inner as Shape) : undefined;
};
