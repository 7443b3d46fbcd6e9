import { type IdKind, toId, toIdOrNull } from '../lib/ids.ts';
import { cached2 } from '../lib/memo.ts';
import {
  type Field,
  type Group,
  isResource,
  type PresentContext,
  type Resource,
  type Row,
  type Shape,
  shapeOf,
} from './resource-fields.ts';
import { CORE, fieldsIn, type Groups } from './resource-groups.ts';

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
