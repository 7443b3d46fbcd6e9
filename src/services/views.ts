import { cached2 } from '../lib/memo.ts';
import { type Presenter, presenterFor, presenterOfSelection } from './presenters.ts';
import { type ReadPlan, readPlan } from './read-plans.ts';
import type { Resource } from './resource-fields.ts';
import { CORE, fieldsIn, type Groups } from './resource-groups.ts';

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
