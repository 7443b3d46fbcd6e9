import { type GraphQLSchema, getNamedType } from 'graphql';
import { AppError } from '../lib/errors.ts';
import type { RestRoute } from './routes.ts';

/**
 * The query parameters a route takes: the arguments of its Rest field that are not in its path.
 * Anything else is a 422 that names it, so a misspelt filter (`qeury=dan`) never silently
 * widens a search to every patient. A parameter given twice is a 422 too, unless it is a list
 * (`include=owner&include=species`), and so is an empty one (`limit=`): SOFA would keep one of
 * two values, or drop an empty one, and neither is what the caller meant.
 */
interface RouteParams {
  allowed: ReadonlySet<string>;
  lists: ReadonlySet<string>;
}

const known = new WeakMap<RestRoute, RouteParams>();

function queryParamsOf(schema: GraphQLSchema, route: RestRoute): RouteParams {
  let params = known.get(route);
  if (!params) {
    const field = schema.getQueryType()?.getFields()[route.field];
    const inPath = new Set([...route.path.matchAll(/:([a-z_]+)/g)].map((m) => m[1]));
    const args = (field?.args ?? []).filter((a) => !inPath.has(a.name));
    params = {
      allowed: new Set(args.map((a) => a.name)),
      lists: new Set(args.filter((a) => getNamedType(a.type).name === 'CommaList').map((a) => a.name)),
    };
    known.set(route, params);
  }
  return params;
}

export function checkQueryParams(schema: GraphQLSchema, route: RestRoute, search: URLSearchParams): void {
  const { allowed, lists } = queryParamsOf(schema, route);
  const unknown = [...new Set(search.keys())].filter((k) => !allowed.has(k));
  const seen = new Set<string>();
  for (const [name, value] of search) {
    if (!allowed.has(name)) continue;
    if (seen.has(name) && !lists.has(name)) {
      throw new AppError(
        'validation_failed',
        `Query parameter '${name}' is given more than once; give it once.`,
        {
          param: name,
        },
      );
    }
    seen.add(name);
    if (value === '') {
      throw new AppError(
        'validation_failed',
        `Query parameter '${name}' is empty; give a value or leave it out.`,
        {
          param: name,
        },
      );
    }
  }
  if (unknown.length) {
    const list = [...allowed];
    throw new AppError(
      'validation_failed',
      `Unknown query parameter ${unknown.map((u) => `'${u}'`).join(', ')}. ${list.length ? `This endpoint takes: ${list.join(', ')}.` : 'This endpoint takes none.'}`,
      { param: unknown[0] },
    );
  }
}
