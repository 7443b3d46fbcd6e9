import type { Scope } from '../auth/scopes.ts';
import type { EnumSet } from '../lib/enums.ts';
import { type IdKind, toId, toIdOrNull } from '../lib/ids.ts';
import { cached2 } from '../lib/memo.ts';
import { isMappableName } from '../lib/names.ts';
import { isoOf } from '../lib/timestamps.ts';

/**
 * Resource definitions: the one place that says which fields a resource has, their types and
 * nullability, where each value comes from, which REST group carries it and which scope guards
 * the record. Everything else is derived from them: the presenter (row → the resource JSON that
 * /v1 returns, GraphQL reads and event `data` carries), the columns and joins a read needs
 * (db/lean.ts), REST pruning and the OpenAPI schemas (src/rest), and the GraphQL object types
 * (src/schema/resource-types.ts). How to add one: docs/adding-a-resource.md.
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
}

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
  column: (
    prop: string,
    type: Scalar | readonly [Scalar],
    opts: FieldOpts & { convert?: Field['convert'] } = {},
  ): Field => ({ type, nullable: false, group: 'core', source: { kind: 'column', prop }, ...opts }),
  /** A point in time, as ISO 8601 text. */
  time: (prop: string, opts: FieldOpts = {}): Field => ({
    type: 'String',
    nullable: false,
    group: 'core',
    source: { kind: 'column', prop },
    convert: (v) => (v == null ? null : isoOf(v)),
    ...opts,
  }),
  ref: (prop: string, target: IdKind, opts: FieldOpts = {}): Field => ({
    type: 'String',
    nullable: false,
    group: 'core',
    source: { kind: 'ref', prop, target },
    ...opts,
  }),
  join: (
    prop: string,
    target: IdKind,
    shape: Shape,
    opts: FieldOpts & { fromParent?: boolean } = {},
  ): Field => {
    const { fromParent, ...rest } = opts;
    return {
      type: shape,
      nullable: false,
      group: 'core',
      source: { kind: 'join', prop, target, ...(fromParent ? { fromParent } : {}) },
      ...rest,
    };
  },
  /** A JSON column presented through `shape` (or a list of them). */
  json: (
    prop: string,
    shape: Shape | readonly [Shape],
    opts: FieldOpts & { whenNull?: () => unknown } = {},
  ): Field => ({ type: shape, nullable: false, group: 'core', source: { kind: 'column', prop }, ...opts }),
  key: (key: string, type: Scalar, opts: FieldOpts = {}): Field => ({
    type,
    nullable: false,
    group: 'core',
    source: { kind: 'key', key },
    ...opts,
  }),
  derived: (
    needs: readonly string[],
    type: FieldType,
    get: (row: Row, pc: PresentContext) => unknown,
    opts: FieldOpts = {},
  ): Field => ({
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
  }
}

/** An embedded object: a reference inside a resource, or the shape of a JSON column. */
export function defineShape(name: string, fields: Record<string, Field>, description?: string): Shape {
  checkFields(name, fields);
  const shape: Shape = { name, fields, ...(description ? { description } : {}) };
  registry.push(shape);
  return shape;
}

export function defineResource(def: {
  name: string;
  kind: IdKind;
  scopes: readonly Scope[];
  description?: string;
  fields: Record<string, Field>;
}): Resource {
  checkFields(def.name, def.fields);
  if (def.fields.id?.source.kind !== 'id') throw new Error(`resource ${def.name}: needs an f.id() field.`);
  const resource: Resource = { ...def };
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

// ---------- groups ----------

/** A set of active groups. Canonical objects, so presenters can be memoised per set. */
export type Groups = ReadonlySet<Group>;

const groupSets = new Map<string, Groups>();

export function groups(...names: Group[]): Groups {
  const key = [...new Set(names)].sort().join(',');
  let set = groupSets.get(key);
  if (!set) {
    set = new Set<Group>(['core', ...names]);
    groupSets.set(key, set);
  }
  return set;
}

export const CORE: Groups = groups();

/** The groups of a REST request: response_format=detailed and include=<a>,<b>. */
export function restGroups(detailed: boolean, include: readonly string[]): Groups {
  return groups(
    ...(detailed ? (['detailed'] as Group[]) : []),
    ...include.map((i) => `include:${i}` as Group),
  );
}

/** Every group a shape's fields (and nested shapes') use: what a single read of everything needs. */
export function everyGroupOf(shape: Shape): Groups {
  const detailed = Object.values(shape.fields).some((f) => f.group === 'detailed');
  return restGroups(detailed, includesOf(shape));
}

export function fieldsIn(shape: Shape, active: Groups): string[] {
  return Object.keys(shape.fields).filter((n) => active.has(shape.fields[n].group));
}

/** The include names a shape's fields (and nested shapes') offer: `include:owner` → owner. */
/** The includes of a shape's own fields: what a record read on its own can embed (one join level). */
export function ownIncludesOf(shape: Shape): string[] {
  return Object.values(shape.fields).flatMap((f) =>
    f.group.startsWith('include:') ? [f.group.slice('include:'.length)] : [],
  );
}

export function includesOf(shape: Shape, seen = new Set<Shape>()): string[] {
  if (seen.has(shape)) return [];
  seen.add(shape);
  const out = new Set<string>();
  for (const field of Object.values(shape.fields)) {
    if (field.group.startsWith('include:')) out.add(field.group.slice('include:'.length));
    const nested = shapeOf(field.type);
    if (nested) for (const i of includesOf(nested, seen)) out.add(i);
  }
  return [...out];
}

// ---------- presenters ----------

export type Presenter = (row: Row, pc: PresentContext) => Row;

/**
 * Row → resource JSON for the given field names; nested shapes carry their fields of `active`.
 * A join that the row does not carry (not read) is left out, for a GraphQL resolver to load; any
 * other field the row lacks means the read and the definition disagree, and fails loudly.
 *
 * Generated, one function per presenter: every property is read and written by its name in code
 * of its own, and the output is one object literal with all its keys. A shared step function
 * per kind of field read and wrote through variable keys (`row[prop]`, `out[name]`), which V8
 * could only serve through its megamorphic caches, and a loop over the steps was one megamorphic
 * call site. The source holds only property and field names of the definitions (as JSON string
 * literals) and the indexes of the functions it calls.
 */
function compile(
  shape: Shape,
  kind: IdKind | undefined,
  names: readonly string[],
  active: Groups,
): Presenter {
  const fns: unknown[] = [];
  const fn = (f: unknown) => `f${fns.push(f) - 1}`;
  const body = names.map((name, i) => {
    const field = shape.fields[name];
    if (!field) throw new Error(`resource ${shape.name}: no field ${name}.`);
    return valueCode(shape, kind, name, field, active, `v${i}`, fn);
  });
  const out = names.map((name, i) => `${JSON.stringify(name)}: v${i}`).join(', ');
  const locals = fns.map((_, i) => `f${i}`).join(', ');
  return new Function(
    'fns',
    `const [${locals}] = fns; return (row, pc) => {\n${body.join('\n')}\nreturn { ${out} };\n};`,
  )(fns) as Presenter;
}

function unread(shape: Shape, name: string): () => never {
  return () => {
    throw new Error(`resource ${shape.name}.${name}: the row was read without this field's source.`);
  };
}

/** Statements that leave field `name`'s output value in the variable `v`; `fn` names a function for them to call. */
function valueCode(
  shape: Shape,
  kind: IdKind | undefined,
  name: string,
  field: Field,
  active: Groups,
  v: string,
  fn: (f: unknown) => string,
): string {
  const { source, convert } = field;
  const nestedShape = shapeOf(field.type);
  const number = field.type === 'Float' || (Array.isArray(field.type) && field.type[0] === 'Float');
  const at = (prop: string) => `row[${JSON.stringify(prop)}]`;
  switch (source.kind) {
    case 'id': {
      if (source.format) return `const ${v} = ${fn(source.format)}(row);`;
      if (!kind) throw new Error(`resource ${shape.name}.${name}: an id field needs the kind of its rows.`);
      return `const ${v} = ${fn(toId)}(${JSON.stringify(kind)}, row.id);`;
    }
    case 'ref':
      return `const ${v}r = ${at(source.prop)}; if (${v}r === undefined) ${fn(unread(shape, name))}();
const ${v} = ${fn(toIdOrNull)}(${JSON.stringify(source.target)}, ${v}r == null ? undefined : ${v}r.id);`;
    case 'join': {
      const nested = fn(presenterFor(nestedShape as Shape, active, source.target));
      // A relation read only as its id (`{id}`) lacks the nested shape's first column: then, as
      // when it was not read with this row at all, it is left out, for GraphQL to load
      // (src/schema/resource-types.ts).
      const probe = firstColumn(nestedShape as Shape);
      const lacking = probe === undefined ? 'false' : `${v}r[${JSON.stringify(probe)}] === undefined`;
      return `const ${v}r = ${at(source.prop)};
const ${v} = ${v}r === undefined ? undefined : ${v}r === null ? null : ${lacking} ? undefined : ${nested}(${v}r, pc);`;
    }
    case 'derived':
      return `const ${v} = ${fn(convert)}(undefined, pc, row);`;
    case 'column':
    case 'key': {
      const prop = source.kind === 'column' ? source.prop : source.key;
      const missing = source.kind === 'column' ? `${fn(unread(shape, name))}()` : 'null';
      const read = `let ${v} = ${at(prop)}; if (${v} === undefined) ${v} = ${missing};`;
      if (convert) return `${read} ${v} = ${fn(convert)}(${v}, pc, row);`;
      const whenNull = field.whenNull ? `${fn(field.whenNull)}()` : 'null';
      let present = '';
      if (nestedShape) {
        const nested = fn(presenterFor(nestedShape, active));
        present = ` else ${v} = Array.isArray(${v}) ? ${v}.map((x) => ${nested}(x, pc)) : ${nested}(${v}, pc);`;
      } else if (number) present = ` else ${v} = Array.isArray(${v}) ? ${v}.map(Number) : Number(${v});`;
      return `${read} if (${v} === null) ${v} = ${whenNull};${present}`;
    }
  }
}

function firstColumn(shape: Shape): string | undefined {
  for (const field of Object.values(shape.fields))
    if (field.source.kind === 'column') return field.source.prop;
  return undefined;
}

const byGroups = new WeakMap<Shape, Map<string, Presenter>>();

/** The presenter of a shape for a set of active groups (REST, events). */
export function presenterFor(shape: Shape, active: Groups, kind?: IdKind): Presenter {
  const key = `${kind ?? ''}|${active === ALL_GROUPS ? '*' : [...active].join(',')}`;
  return cached2(byGroups, shape, key, () =>
    compile(shape, kind ?? (isResource(shape) ? shape.kind : undefined), fieldsIn(shape, active), active),
  );
}

const bySelection = new WeakMap<Shape, WeakMap<ReadonlySet<string>, Presenter>>();
/** Every group (GraphQL offers every field). */
class AllGroups extends Set<Group> {
  override has(): boolean {
    return true;
  }
}
const ALL_GROUPS: Groups = new AllGroups();

/**
 * The presenter of a resource for the fields a GraphQL query selects (memoised per selection
 * set, which src/schema/selection.ts memoises per document). Nested shapes carry all fields.
 */
export function presenterOfSelection(resource: Resource, selected: ReadonlySet<string>): Presenter {
  return cached2(
    bySelection,
    resource,
    selected,
    () => {
      const names = Object.keys(resource.fields).filter((n) => n === 'id' || selected.has(n));
      return compile(resource, resource.kind, names, ALL_GROUPS);
    },
    () => new WeakMap(),
  );
}

/** Presents one row with the given groups (REST bodies, event data). */
export const present = (resource: Resource, row: Row, pc: PresentContext, active: Groups = CORE): Row =>
  presenterFor(resource, active)(row, pc);

// ---------- reads ----------

/** What a lean read of a resource needs: root columns and to-one joins with their columns. */
export interface ReadPlan {
  fields: string[];
  joins: Record<string, string[]>;
}

function columnsOf(shape: Shape, where: string, active?: Groups): string[] {
  const out: string[] = [];
  for (const [name, field] of Object.entries(shape.fields)) {
    if (active && !active.has(field.group)) continue;
    const s = field.source;
    if (s.kind === 'id') continue;
    if (s.kind === 'column' || s.kind === 'ref') out.push(s.prop);
    else if (s.kind === 'derived') out.push(...s.needs);
    else if (s.kind === 'join')
      throw new Error(
        `resource ${where}: ${shape.name}.${name} is a join inside a join; lean reads join one level.`,
      );
  }
  return [...new Set(out)];
}

const plans = new WeakMap<Shape, Map<string, ReadPlan>>();

/**
 * The columns and joins that presenting `names` of a resource needs. A join marked `fromParent`
 * reads only the relation's id: the list attaches the parent record it already has.
 */
export function readPlan(resource: Resource, names: Iterable<string>, standalone?: Groups): ReadPlan {
  // The id is always presented (GraphQL node ids, cursors), so what it needs is always read.
  const list = [...new Set(['id', ...names])].filter((n) => resource.fields[n]).sort();
  const key = standalone ? `${list.join(',')}|${[...standalone].join(',')}` : list.join(',');
  return cached2(plans, resource, key, () => {
    const fields = new Set<string>();
    const joins: Record<string, string[]> = {};
    for (const name of list) {
      const s = resource.fields[name].source;
      if (s.kind === 'column' || s.kind === 'ref') fields.add(s.prop);
      else if (s.kind === 'derived' || (s.kind === 'id' && s.needs))
        for (const n of s.needs ?? []) fields.add(n);
      else if (s.kind === 'join') {
        if (s.fromParent && !standalone) fields.add(s.prop);
        else
          joins[s.prop] = columnsOf(
            shapeOf(resource.fields[name].type) as Shape,
            `${resource.name}.${name}`,
            standalone,
          );
      }
    }
    // Frozen: lean reads memoise a frozen plan's part of their query shapes (src/db/lean.ts).
    for (const columns of Object.values(joins)) Object.freeze(columns);
    return Object.freeze({ fields: Object.freeze([...fields]), joins: Object.freeze(joins) }) as ReadPlan;
  });
}

// ---------- start-up check against the entities ----------

interface PropMeta {
  kind: string;
  nullable?: boolean;
  targetMeta?: { className: string; properties: Record<string, PropMeta> };
}
type EntityMetaLookup = (entity: string) => { properties: Record<string, PropMeta> } | undefined;

/**
 * Fails when a definition names a column, relation or target that its entity does not have, so a
 * wrong source stops the service at start-up (and every test run), never answering null.
 */
export function checkResources(metaOf: EntityMetaLookup, shapes: readonly Shape[] = registry): void {
  const errors: string[] = [];
  const checkShape = (shape: Shape, entity: string, seen: Set<Shape>) => {
    const meta = metaOf(entity);
    if (!meta) {
      errors.push(`${shape.name}: no entity ${entity}.`);
      return;
    }
    for (const [name, field] of Object.entries(shape.fields)) {
      const s = field.source;
      const where = `${shape.name}.${name} (${entity})`;
      const props = s.kind === 'column' || s.kind === 'ref' || s.kind === 'join' ? [s.prop] : [];
      if (s.kind === 'derived' || s.kind === 'id') props.push(...(s.needs ?? []));
      if (s.kind === 'key') errors.push(`${where}: f.key() belongs to shapes of JSON columns.`);
      for (const prop of props) {
        const p = meta.properties[prop];
        if (!p) errors.push(`${where}: ${entity} has no property ${prop}.`);
        else if ((s.kind === 'ref' || s.kind === 'join') && p.kind !== 'm:1')
          errors.push(`${where}: ${prop} is not a to-one relation.`);
        else if ((s.kind === 'ref' || s.kind === 'join') && p.targetMeta?.className !== s.target)
          errors.push(`${where}: ${prop} points at ${p.targetMeta?.className}, not ${s.target}.`);
        else if (s.kind === 'column' && p.kind !== 'scalar' && p.kind !== 'embedded')
          errors.push(`${where}: ${prop} is a relation; use f.ref or f.join.`);
        else if (s.kind !== 'derived' && p.nullable && !field.nullable && !field.whenNull)
          errors.push(`${where}: ${prop} may be NULL but the field is declared non-null.`);
      }
      if (s.kind === 'join' && !s.fromParent) {
        try {
          columnsOf(shapeOf(field.type) as Shape, where);
        } catch (e) {
          errors.push((e as Error).message);
        }
      }
      const nested = shapeOf(field.type);
      if (nested && s.kind === 'join' && !seen.has(nested)) {
        seen.add(nested);
        checkShape(nested, s.target, seen);
      }
      if (nested && s.kind === 'column') checkJsonShape(nested);
    }
  };
  const checkJsonShape = (shape: Shape) => {
    for (const [name, field] of Object.entries(shape.fields))
      if (field.source.kind !== 'key' && field.source.kind !== 'derived')
        errors.push(`${shape.name}.${name}: a shape of a JSON column reads keys (f.key).`);
  };
  for (const shape of shapes) if (isResource(shape)) checkShape(shape, shape.kind, new Set([shape]));
  if (errors.length)
    throw new Error(`Resource definitions do not match the entities:\n- ${errors.join('\n- ')}`);
}

// ---------- views: what a read reads and how it presents ----------

/** How one list or read serves one caller: the columns to read and the presenter of the rows. */
export interface View {
  readonly read: ReadPlan;
  readonly present: Presenter;
  /** Unique per view: names DataLoaders that batch reads of this view. */
  readonly key: string;
}

let views = 0;
const newKey = () => `v${++views}`;

const viewsByGroups = new WeakMap<Resource, Map<Groups, View>>();

/** REST and events: the fields of the active groups. */
export function viewFor(resource: Resource, active: Groups = CORE): View {
  return cached2(viewsByGroups, resource, active, () => ({
    read: readPlan(resource, fieldsIn(resource, active)),
    present: presenterFor(resource, active),
    key: newKey(),
  }));
}

const standaloneViews = new WeakMap<Resource, Map<Groups, View>>();

/**
 * A record read on its own (by id, in a top-level list, as event data): what lists of a parent
 * attach (`fromParent`, a record's patient) is joined and presented here, with the nested
 * shape's fields of the active groups.
 */
export function standaloneView(resource: Resource, active: Groups = CORE): View {
  return cached2(standaloneViews, resource, active, () => ({
    read: readPlan(resource, fieldsIn(resource, active), active),
    present: presenterFor(resource, active),
    key: newKey(),
  }));
}

const viewsBySelection = new WeakMap<Resource, WeakMap<ReadonlySet<string>, View>>();

/** GraphQL: the fields a query selects (a set memoised per document by src/schema/selection.ts). */
export function viewOfSelection(resource: Resource, selected: ReadonlySet<string>): View {
  return cached2(
    viewsBySelection,
    resource,
    selected,
    () => ({
      read: readPlan(resource, selected),
      present: presenterOfSelection(resource, selected),
      key: newKey(),
    }),
    () => new WeakMap(),
  );
}
