import type { EntityClass } from '@mikro-orm/core';
import { LockMode } from '@mikro-orm/core';
import { runNamed, statementOf } from '../db/named-statements.ts';
import { AppError, notFound } from '../lib/errors.ts';
import { type IdKind, tryParseId } from '../lib/ids.ts';
import type { Write } from './unit-of-work.ts';
import type { WriteContext } from './write-definition.ts';

/**
 * What a write's `run` loads and names: the path's object (locked, If-Match checked) and the
 * records a body refers to (each the clinic's; a catalog entry not disabled).
 */

export function loader(w: Write, expected: number | '*' | undefined): WriteContext['load'] {
  return async (entity, kind, publicId) => {
    const n = publicId == null ? null : tryParseId(kind, publicId);
    const found =
      n == null
        ? null
        : await w.em.findOne(entity, { id: n } as any, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!found)
      throw notFound(
        kind.replace(/[A-Z]/g, (c, i) => (i ? ' ' : '') + c.toLowerCase()),
        String(publicId),
      );
    checkVersion(kind, found.updatedAt, expected);
    return found;
  };
}

/** The 412 when `expected` (If-Match, in ms) names another version than `updatedAt` (also for a `prepare` step's early check). */
export function checkVersion(
  kind: IdKind,
  updatedAt: Date | string,
  expected: number | '*' | undefined,
): void {
  if (expected !== undefined && expected !== '*' && new Date(updatedAt).getTime() !== expected)
    throw new AppError(
      'precondition_failed',
      `The ${kind.toLowerCase()} changed since the version If-Match names (its updated_at is now ${new Date(updatedAt).toISOString()}); read it again and retry. Nothing was changed.`,
      { param: 'If-Match' },
    );
}

/**
 * The entities whose `disabledAt` means "no longer offered" (catalog entries), not another kind
 * of disabled: the catalog names them (./catalog/catalog.ts), so the write mechanism does not
 * depend on the catalog.
 */
const offered = new Set<string>();

/** A write may not name a disabled entry of `entity` anew (it stays with what named it before). */
export function refuseDisabled(entity: string): void {
  offered.add(entity);
}

const isCatalogEntry = (w: Write, entity: EntityClass<any>) =>
  offered.has(w.em.getMetadata().get(entity).className);

const unknownRef = (param: string) =>
  new AppError('validation_failed', `${param}: no such record at this clinic.`, { param });
const disabledRef = (param: string) =>
  new AppError('validation_failed', `${param}: that entry is disabled; enable it first or pick another.`, {
    param,
  });

export function batchReferrer(w: Write): WriteContext['refs'] {
  return async (wanted, opts = {}) => {
    const asked = (
      Object.entries(wanted) as [string, [EntityClass<any>, number | null | undefined, ...string[]]][]
    ).filter(([, [, id]]) => id != null) as [string, [EntityClass<any>, number, ...string[]]][];
    const refs: Record<string, any> = Object.fromEntries(Object.keys(wanted).map((k) => [k, null]));
    const values: Record<string, Record<string, unknown>> = {};
    if (!asked.length) return { refs, values };
    const params: unknown[] = [];
    const tableOf = (entity: EntityClass<any>) => w.em.getMetadata().get(entity).tableName;
    const locked = opts.lock
      ? (wanted as Record<string, [EntityClass<any>, unknown]>)[opts.lock[1]]
      : undefined;
    const lock =
      opts.lock && locked?.[1] != null
        ? [
            `(select pg_advisory_xact_lock(?, t.id) from "${tableOf(locked[0])}" t where t.clinic_id = ? and t.id = ?) as "lock"`,
          ]
        : [];
    if (lock.length) params.push(opts.lock?.[0], w.clinicId, locked?.[1]);
    const selects = asked.map(([, [entity, id, ...props]], i) => {
      const meta = w.em.getMetadata().get(entity);
      const column = (prop: string) => `t."${meta.properties[prop].fieldNames[0]}"`;
      // 0: unknown (or another clinic's), 1: usable, 2: disabled, then the columns asked for.
      const state = isCatalogEntry(w, entity)
        ? `case when ${column('disabledAt')} is null then 1 else 2 end`
        : '1';
      params.push(w.clinicId, id);
      return `(select json_build_array(${[state, ...props.map(column)].join(', ')}) from "${meta.tableName}" t where t.clinic_id = ? and t.id = ?) as "r${i}"`;
    });
    const { rows } = await runNamed(w.em, statementOf(`select ${[...lock, ...selects].join(', ')}`), params);
    const row = rows[0] as Record<string, unknown[] | null>;
    asked.forEach(([param, [entity, id, ...props]], i) => {
      const found = row[`r${i}`];
      if (!found) throw unknownRef(param);
      if (found[0] === 2) throw disabledRef(param);
      refs[param] = w.em.getReference(entity, id);
      if (props.length) values[param] = Object.fromEntries(props.map((p, j) => [p, found[j + 1]]));
    });
    return { refs, values };
  };
}

export function referrer(w: Write): WriteContext['ref'] {
  return async (entity, id, param) => {
    const found = await w.em.findOne(entity, { id } as any);
    if (!found) throw unknownRef(param);
    // A disabled catalog entry stays with what named it before, but a write cannot name it anew.
    if (isCatalogEntry(w, entity) && (found as { disabledAt?: Date | null }).disabledAt)
      throw disabledRef(param);
    return found;
  };
}
