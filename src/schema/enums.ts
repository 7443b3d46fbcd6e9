import type { EnumSet } from '../lib/enums.ts';
import { enumNameOf } from '../lib/names.ts';
import { builder } from './builder.ts';

/**
 * The GraphQL enum of a defined set (src/lib/enums.ts): values named in UPPER_CASE, each standing
 * for the value as REST spells it, so resolvers and services keep working with `bank_transfer`
 * and only GraphQL's serialization and argument parsing see `BANK_TRANSFER`. Made once per set.
 * Both sub-graphs share it; the OpenAPI document lists the REST values (src/rest/openapi.ts).
 */
const made = new Map<EnumSet, any>();

export function enumTypeOf(set: EnumSet): any {
  let ref = made.get(set);
  if (!ref) {
    ref = builder.enumType(set.name, {
      description: set.description,
      values: Object.fromEntries(
        set.values.map((v) => [enumNameOf(v), { value: v, description: set.meanings[v] }]),
      ),
    });
    made.set(set, ref);
  }
  return ref;
}
