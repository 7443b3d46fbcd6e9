import {
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  execute,
  type GraphQLSchema,
  getOperationAST,
  valueFromASTUntyped,
} from 'graphql';
import { type CompiledQuery, compileQuery, isCompiledQuery } from 'graphql-jit';

type Compiled = (CompiledQuery & { defaults: readonly [string, unknown][] }) | ExecutionResult;

/**
 * Compiled queries per schema and document. Keyed weakly: SOFA's route documents live as long as
 * the router, Yoga's parsed documents as long as its parse cache holds them, so the cache is
 * bounded by theirs.
 */
const cache = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, Map<string, Compiled>>>();

function compiledFor(schema: GraphQLSchema, document: DocumentNode, operationName: string): Compiled {
  let bySchema = cache.get(schema);
  if (!bySchema) {
    bySchema = new WeakMap();
    cache.set(schema, bySchema);
  }
  let byDoc = bySchema.get(document);
  if (!byDoc) {
    byDoc = new Map();
    bySchema.set(document, byDoc);
  }
  let compiled = byDoc.get(operationName);
  if (!compiled) {
    const query = compileQuery(schema, document, operationName || undefined);
    compiled = isCompiledQuery(query)
      ? Object.assign(query, { defaults: defaultsOf(document, operationName) })
      : query;
    byDoc.set(operationName, compiled);
  }
  return compiled;
}

/**
 * The operation's variables that have a default, with it as a client would send it. graphql-jit
 * refuses an omitted non-null variable with a default (`$n: Int! = 3`), which GraphQL allows and
 * graphql-js runs with the default: an omitted one is given its default before jit coerces it.
 */
function defaultsOf(document: DocumentNode, operationName: string): [string, unknown][] {
  const operation = getOperationAST(document, operationName || undefined);
  return (operation?.variableDefinitions ?? []).flatMap((v) =>
    v.defaultValue ? [[v.variable.name.value, valueFromASTUntyped(v.defaultValue)] as [string, unknown]] : [],
  );
}

function withDefaults(
  variables: ExecutionArgs['variableValues'],
  defaults: readonly [string, unknown][],
): Record<string, unknown> {
  const given = variables ?? {};
  let out: Record<string, unknown> | undefined;
  for (const [name, value] of defaults) {
    if (name in given) continue;
    out ??= { ...given };
    out[name] = value;
  }
  return out ?? given;
}

/** A schema whose documents run on another (src/schema/execution-schema.ts). */
export interface Twin {
  schema: GraphQLSchema;
  documentFor(document: DocumentNode): DocumentNode | null;
}

const twins = new WeakMap<GraphQLSchema, Twin>();

/** Documents validated against `schema` run on `twin.schema` as `twin.documentFor` rewrites them. */
export function executeOnTwin(schema: GraphQLSchema, twin: Twin): void {
  twins.set(schema, twin);
}

/**
 * The one GraphQL executor of the app, for /graphql (Yoga) and /v1 (SOFA) alike: graphql-jit
 * compiles each distinct document once into plain JavaScript, which executes a page of patients
 * several times faster than graphql-js's generic interpreter. Documents that jit cannot compile
 * (its result then carries the validation errors) run on graphql-js, which reports them in the
 * standard way.
 */
export function compiledExecute(args: ExecutionArgs): ExecutionResult | Promise<ExecutionResult> {
  const twin = twins.get(args.schema);
  const document = twin?.documentFor(args.document);
  if (twin && document) args = { ...args, schema: twin.schema, document };
  const compiled = compiledFor(args.schema, args.document, args.operationName ?? '');
  if (!isCompiledQuery(compiled)) return execute(args);
  return compiled.query(
    args.rootValue,
    args.contextValue,
    withDefaults(args.variableValues, compiled.defaults),
  ) as ExecutionResult | Promise<ExecutionResult>;
}
