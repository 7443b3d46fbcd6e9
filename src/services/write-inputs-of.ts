import { z } from 'zod';
import type { Field, FieldWrite, Resource } from './resource.ts';

/**
 * A resource's create and update inputs, derived from its fields' `write` (FieldWrite): the
 * fields in the definition's order, each under its input name (`<name>_id` for a join), then the
 * extra fields passed (write-only arguments that are no field, like a booking's `outside_hours`;
 * one with a field's name replaces that field's derived input, in its place). A create takes a
 * non-null field as required and a nullable one as optional or null; an update takes every field
 * as optional, a nullable one clearable (null). `write.create` and `write.update` say otherwise.
 * `kind`, for a resource several kinds of write take differently (a dental patient and an animal
 * are both Patient rows): the fields whose `write.kinds` names it, or that name no kind.
 */

/** `required-nullable`: must be given, and may be given as null (a create's withheld caller). */
type Mode = 'required' | 'optional' | 'nullable' | 'required-nullable';

/** The name a write's body gives a field. */
export const inputNameOf = (name: string, field: Field): string =>
  field.write?.name ?? ('idInput' in field && field.idInput ? `${name}_id` : name);

const takes = (w: FieldWrite, phase: 'create' | 'update') => w.on === 'both' || w.on === phase;

const modeOf = (field: Field, w: FieldWrite, phase: 'create' | 'update'): Mode =>
  phase === 'create'
    ? (w.create ?? (field.nullable ? 'nullable' : 'required'))
    : (w.update ?? (field.nullable ? 'nullable' : 'optional'));

function wrap(w: FieldWrite, mode: Mode): z.ZodType {
  const t =
    mode === 'required'
      ? w.input
      : mode === 'optional'
        ? w.input.optional()
        : mode === 'required-nullable'
          ? w.input.nullable()
          : w.input.nullable().optional();
  return w.description ? t.meta({ description: w.description }) : t;
}

const forKind = (w: FieldWrite, kind: string | undefined) => !kind || !w.kinds || w.kinds.includes(kind);

/** The fields of `resource` a phase's input takes: [input name, field, its write, its mode]. */
export function writtenFields(
  resource: Resource,
  phase: 'create' | 'update',
  kind?: string,
): [string, string, Field, FieldWrite, Mode][] {
  return Object.entries(resource.fields).flatMap(([name, field]) =>
    field.write && takes(field.write, phase) && forKind(field.write, kind)
      ? [[inputNameOf(name, field), name, field, field.write, modeOf(field, field.write, phase)] as const]
      : [],
  ) as [string, string, Field, FieldWrite, Mode][];
}

function inputOf(
  resource: Resource,
  phase: 'create' | 'update',
  extra: z.ZodRawShape,
  kind: string | undefined,
): z.ZodObject {
  const shape: Record<string, z.ZodType> = {};
  for (const [input, , , w, mode] of writtenFields(resource, phase, kind))
    shape[input] = (extra[input] as z.ZodType | undefined) ?? wrap(w, mode);
  for (const [input, t] of Object.entries(extra)) if (!(input in shape)) shape[input] = t as z.ZodType;
  return z.strictObject(shape);
}

export function createInputOf<
  const R extends Resource,
  X extends z.ZodRawShape = Record<never, never>,
  const Kind extends string = AnyKind,
>(
  resource: R,
  extra: X = {} as X,
  kind?: Kind,
): z.ZodObject<Merge<InputShape<R['fields'], 'create', Kind>, X>, z.core.$strict> {
  return inputOf(resource, 'create', extra, kind) as never;
}

export function updateInputOf<
  const R extends Resource,
  X extends z.ZodRawShape = Record<never, never>,
  const Kind extends string = AnyKind,
>(
  resource: R,
  extra: X = {} as X,
  kind?: Kind,
): z.ZodObject<Merge<InputShape<R['fields'], 'update', Kind>, X>, z.core.$strict> {
  return inputOf(resource, 'update', extra, kind) as never;
}

// ---------- the same, for the compiler ----------

type Merge<A, B> = Omit<A, keyof B> & B;
type NameOf<K extends string, F> =
  WriteOf<F> extends { name: infer N extends string } ? N : F extends { idInput: true } ? `${K}_id` : K;
type WriteOf<F> = F extends { write: infer W extends FieldWrite } ? W : never;
type Takes<F, P> = WriteOf<F> extends { on: infer O } ? (O extends P | 'both' ? true : false) : false;
type ModeOfT<F, P> = P extends 'create'
  ? WriteOf<F> extends { create: infer M }
    ? M
    : F extends { nullable: true }
      ? 'nullable'
      : 'required'
  : WriteOf<F> extends { update: infer M }
    ? M
    : F extends { nullable: true }
      ? 'nullable'
      : 'optional';
type Wrapped<T extends z.ZodType, M> = M extends 'required'
  ? T
  : M extends 'optional'
    ? z.ZodOptional<T>
    : M extends 'required-nullable'
      ? z.ZodNullable<T>
      : z.ZodOptional<z.ZodNullable<T>>;
/** No kind given: every field, whatever kinds it names. */
type AnyKind = '*';
type ForKind<F, Kind> = [Kind] extends [AnyKind]
  ? true
  : WriteOf<F> extends { kinds: readonly (infer B)[] }
    ? Kind extends B
      ? true
      : false
    : true;
type InputShape<Fs, P, Kind = AnyKind> = {
  // `string extends K`: the index signature every resource's fields also have.
  [K in keyof Fs as K extends string
    ? string extends K
      ? never
      : Takes<Fs[K], P> extends true
        ? ForKind<Fs[K], Kind> extends true
          ? NameOf<K, Fs[K]>
          : never
        : never
    : never]: Wrapped<WriteOf<Fs[K]>['input'], ModeOfT<Fs[K], P>>;
};
