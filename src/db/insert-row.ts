import type { EntityKey, EntityMetadata, EntityName, EntityProperty } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { cached } from '../lib/memo.ts';
import { type NamedStatement, runNamed, statementOf } from './named-statements.ts';

/**
 * An INSERT built from the entity's metadata, for a write that inserts by a statement of its own
 * (a named one: runNamed) instead of an entity and a flush. Its columns are the entity's own,
 * every one of them, so a column added to the entity is in the statement without an edit; its
 * values are named by property, and a property with no value (not even null) is an error at run
 * time, so a new column cannot be left out of the values either. The compiler checks the names
 * only: a write's plain columns come from its resource definition (WriteContext.insertFields).
 * The statement's text is fixed per entity: one named statement, planned once per connection.
 */

/** Stored properties of E but the generated primary key: an insert must give each a value (checked as it runs). */
export type InsertValues<E> = { [K in Exclude<EntityKey<E>, 'id'>]?: unknown };

interface InsertPlan {
  props: readonly EntityProperty[];
  statement: NamedStatement;
}

const plans = new WeakMap<EntityMetadata, InsertPlan>();

/** The columns an insert names: scalars and owning to-one relations, not a generated key. */
export function insertedProps(meta: EntityMetadata): EntityProperty[] {
  return meta.props.filter(
    (p) =>
      p.persist !== false &&
      !p.formula &&
      !(p.primary && p.autoincrement) &&
      (p.kind === 'scalar' || p.kind === 'm:1' || (p.kind === '1:1' && p.owner)),
  );
}

/** The entity's INSERT, `?` placeholders in the order of its properties, answering the id. */
export function insertSqlOf(meta: EntityMetadata): string {
  const columns = insertedProps(meta).flatMap((p) => p.fieldNames);
  const q = (name: string) => `"${name}"`;
  return `insert into ${q(meta.tableName)} (${columns.map(q).join(', ')}) values (${columns.map(() => '?').join(', ')}) returning ${meta.primaryKeys.map((k) => q(meta.properties[k].fieldNames[0])).join(', ')}`;
}

const planOf = (meta: EntityMetadata): InsertPlan =>
  cached(plans, meta, () => ({ props: insertedProps(meta), statement: statementOf(insertSqlOf(meta)) }));

/** Inserts one row (inside the write's transaction when there is one) and answers its id. */
export async function insertRow<E extends object>(
  em: EntityManager,
  entity: EntityName<E>,
  values: InsertValues<E>,
): Promise<number> {
  const meta = em.getMetadata().get(entity);
  const plan = planOf(meta);
  const given = values as Record<string, unknown>;
  const params = plan.props.map((p) => {
    if (!(p.name in given) || given[p.name] === undefined)
      throw new Error(
        `insert into ${meta.tableName}: no value for ${p.name} (null is a value; leaving it out is not).`,
      );
    return dbValue(em, p, given[p.name]);
  });
  for (const name of Object.keys(given))
    if (!plan.props.some((p) => p.name === name))
      throw new Error(`insert into ${meta.tableName}: ${name} is not one of its columns.`);
  const { rows } = await runNamed(em, plan.statement, params);
  const row = rows[0] as Record<string, unknown> | unknown[];
  return Number(Array.isArray(row) ? row[0] : Object.values(row)[0]);
}

/** A relation's value is its id (an entity, a reference or the id itself); a custom type converts. */
function dbValue(em: EntityManager, p: EntityProperty, v: unknown): unknown {
  if (v === null) return null;
  if (p.kind !== 'scalar') return typeof v === 'object' ? (v as { id: unknown }).id : v;
  if (p.customType && !(v instanceof Date))
    return p.customType.convertToDatabaseValue(v, em.getPlatform(), { mode: 'query' });
  return v;
}
