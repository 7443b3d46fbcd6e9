import type { GraphQLSchema } from 'graphql';
import { AppError } from '../lib/errors.ts';
import type { RestRoute } from './routes.ts';

/**
 * The query parameters a route takes: the arguments of its Rest field that are not in its path.
 * Anything else is a 422 that names it, so a misspelt filter (`qeury=dan`) never silently
 * widens a search to every patient.
 */
const known = new WeakMap<RestRoute, ReadonlySet<string>>();

function queryParamsOf(schema: GraphQLSchema, route: RestRoute): ReadonlySet<string> {
  let set = known.get(route);
  if (!set) {
    const field = schema.getQueryType()?.getFields()[route.field];
    const inPath = new Set([...route.path.matchAll(/:([a-z_]+)/g)].map((m) => m[1]));
    set = new Set((field?.args ?? []).map((a) => a.name).filter((n) => !inPath.has(n)));
    known.set(route, set);
  }
  return set;
}

export function checkQueryParams(schema: GraphQLSchema, route: RestRoute, search: URLSearchParams): void {
  const allowed = queryParamsOf(schema, route);
  const unknown = [...new Set(search.keys())].filter((k) => !allowed.has(k));
  if (unknown.length) {
    const list = [...allowed];
    throw new AppError(
      'validation_failed',
      `Unknown query parameter ${unknown.map((u) => `'${u}'`).join(', ')}. ${list.length ? `This endpoint takes: ${list.join(', ')}.` : 'This endpoint takes none.'}`,
      { param: unknown[0] },
    );
  }
}
