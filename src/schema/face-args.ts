import { camelOf, snakeOf } from '../lib/names.ts';
import { renamedError } from './input-errors.ts';

/**
 * Arguments defined once for a Rest field and its Public twin (docs/graphql.md, Naming): written
 * with REST's snake_case names (`updated_since`, what the services take and OpenAPI documents),
 * offered under the name each face uses (`updatedSince` on the Public one).
 */
export type Face = 'Public' | 'Rest';

/** A name as `face` spells it. */
export const nameOn = (face: Face, snake: string): string => (face === 'Public' ? camelOf(snake) : snake);

export function argsOn<T>(face: Face, args: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(args).map(([name, arg]) => [nameOn(face, name), arg]));
}

/** A Public field's arguments under the names the services take (`updatedSince` → `updated_since`). */
export function serviceArgs(args: Record<string, unknown>): Record<string, any> {
  return Object.fromEntries(Object.entries(args).map(([name, value]) => [snakeOf(name), value]));
}

/**
 * A Public read's refusal naming the argument as its caller wrote it: the services name REST's
 * parameter (`updated_since must be …`, param `updated_since`), the query said `updatedSince`.
 */
export const inArgNames = (err: unknown): unknown => renamedError(err, camelOf);

/** Runs a Public read with `serviceArgs`, its refusals in the argument names (`inArgNames`). */
export async function withServiceArgs<T>(
  args: Record<string, unknown>,
  read: (args: Record<string, any>) => Promise<T> | T,
): Promise<T> {
  try {
    return await read(serviceArgs(args));
  } catch (e) {
    throw inArgNames(e);
  }
}
