import type { FieldNode, GraphQLResolveInfo, SelectionSetNode } from 'graphql';
import { snakeOf } from '../lib/names.ts';

/**
 * The names of the fields a query selects at `path` below the current field (through fragments
 * and inline fragments), so a resolver can read in one statement what nested fields will need.
 * `path` and the answer use the definitions' names (`first_name`), which GraphQL spells in
 * camelCase (src/lib/names.ts).
 * Fields under @skip/@include count as selected: at worst a little is read for nothing.
 */
export function selectedFields(info: Where, path: readonly string[]): ReadonlySet<string> {
  // Per field of a parsed document (Yoga caches documents), so a list's rows share one answer.
  let byPath = memo.get(info.fieldNodes[0]);
  if (!byPath) {
    byPath = new Map();
    memo.set(info.fieldNodes[0], byPath);
  }
  const key = path.join('.');
  let out = byPath.get(key);
  if (!out) {
    out = collect(info, path);
    byPath.set(key, out);
  }
  return out;
}

/** A field's nodes in its document: a resolver's info, or a field planned from its parent's. */
type Where = Pick<GraphQLResolveInfo, 'fieldNodes' | 'fragments'>;

const memo = new WeakMap<FieldNode, Map<string, ReadonlySet<string>>>();

function collect(info: Where, path: readonly string[]): ReadonlySet<string> {
  let sets: SelectionSetNode[] = info.fieldNodes.flatMap((f) => (f.selectionSet ? [f.selectionSet] : []));
  for (const name of path) {
    sets = fieldsOf(info, sets)
      .filter((f) => snakeOf(f.name.value) === name && f.selectionSet)
      .map((f) => f.selectionSet as SelectionSetNode);
  }
  return new Set(fieldsOf(info, sets).map((f) => snakeOf(f.name.value)));
}

function fieldsOf(info: Where, sets: SelectionSetNode[]): FieldNode[] {
  const out: FieldNode[] = [];
  const visit = (set: SelectionSetNode) => {
    for (const s of set.selections) {
      if (s.kind === 'Field') out.push(s);
      else if (s.kind === 'InlineFragment') visit(s.selectionSet);
      else {
        const fragment = info.fragments[s.name.value];
        if (fragment) visit(fragment.selectionSet);
      }
    }
  };
  for (const set of sets) visit(set);
  return out;
}
