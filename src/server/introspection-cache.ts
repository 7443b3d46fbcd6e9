import type { DocumentNode, ExecutionResult, GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { ANONYMOUS_MIN_BYTES, anonymousBudget } from './context.ts';
import { toGraphQLError } from './graphql-errors.ts';
import { anonymousShape, documentShape } from './introspection.ts';

/**
 * Answers of introspection documents, kept per schema and document: the schema does not change
 * while the process runs, so the same document with the same variables has the same answer, and
 * GraphiQL's Docs pane, however many open it, is executed once. Any caller's introspection-only
 * document is served from here (a key still spends its points first, in graphql-limits.ts); a
 * caller without a key is charged the answer's bytes from its address's budget
 * (`anonymousBudget`), a kept answer as a new one: the budget counts what is sent.
 *
 * A document is known by the object Yoga's parser cache hands out for its text, so the text is
 * neither printed nor hashed. Bounded: a few dozen answers, a few MiB of JSON, the least
 * recently used dropped first; an answer with errors or larger than MAX_ENTRY_BYTES is not kept,
 * nor a key's document of a shape refused without a key (aliases, several roots, deeper).
 */
const MAX_ENTRIES = 32;
const MAX_TOTAL_BYTES = 4 << 20;
const MAX_ENTRY_BYTES = 2 << 20;

interface Entry {
  result: ExecutionResult;
  bytes: number;
}

/** Answers served from the cache and executed (tests read them: a kept answer is not executed). */
export const introspectionCacheStats = { hits: 0, executed: 0 };

const caches = new WeakMap<GraphQLSchema, { entries: Map<string, Entry>; bytes: number }>();
const shapes = new WeakMap<DocumentNode, { id: number; kept: boolean; roots: number }>();
let nextId = 0;

function documentOf(document: DocumentNode) {
  let known = shapes.get(document);
  if (!known) {
    const shape = documentShape(document);
    // What a caller without a key may send; a key's larger shapes are executed as they come.
    known = { id: ++nextId, kept: anonymousShape(shape), roots: shape?.roots ?? 0 };
    shapes.set(document, known);
  }
  return known;
}

function cacheOf(schema: GraphQLSchema) {
  let cache = caches.get(schema);
  if (!cache) {
    cache = { entries: new Map(), bytes: 0 };
    caches.set(schema, cache);
  }
  return cache;
}

/**
 * What a new answer with a `__schema` or `__type` root is charged before it is made (at most the
 * whole budget): about the largest an anonymous document can ask for (GraphiQL's full
 * introspection is 360 KB, the largest found 600 KB). Charged before, so that many requests at
 * once from one address cannot all pass a budget not yet spent; the difference is settled once
 * the answer's size is known. Without a root (`{ __typename }`) it is ANONYMOUS_MIN_BYTES.
 */
export const NEW_ANSWER_BYTES = 512 * 1024;

/** `anonymousBytesPerWindow`: the address's budget (src/lib/limits.ts). */
export function introspectionCachePlugin(anonymousBytesPerWindow: number): Plugin {
  const newAnswer = Math.min(NEW_ANSWER_BYTES, Math.max(anonymousBytesPerWindow, ANONYMOUS_MIN_BYTES));
  return {
    async onExecute({ args, setResultAndStopExecution }) {
      const doc = documentOf(args.document);
      if (!doc.kept) return;
      const cache = cacheOf(args.schema);
      const key = `${doc.id}\0${args.operationName ?? ''}\0${JSON.stringify(args.variableValues ?? {})}`;
      const kept = cache.entries.get(key);
      // A request without a key has spent ANONYMOUS_MIN_BYTES already (its cost, graphql-limits.ts).
      const budget = anonymousBudget();
      const charged = kept ? kept.bytes : doc.roots > 0 ? newAnswer : ANONYMOUS_MIN_BYTES;
      try {
        await budget?.spend(charged - ANONYMOUS_MIN_BYTES);
      } catch (e) {
        setResultAndStopExecution({ errors: [toGraphQLError(e)] });
        return;
      }
      if (kept) {
        // Most recently used last: the first entry is the one to drop.
        cache.entries.delete(key);
        cache.entries.set(key, kept);
        introspectionCacheStats.hits++;
        setResultAndStopExecution(kept.result);
        return;
      }
      introspectionCacheStats.executed++;
      return {
        onExecuteDone: ({ result }) => {
          if (Symbol.asyncIterator in result) return;
          const bytes = Buffer.byteLength(JSON.stringify(result));
          if (!result.errors?.length && bytes <= MAX_ENTRY_BYTES) {
            // The same document run twice at once: kept once.
            cache.bytes -= cache.entries.get(key)?.bytes ?? 0;
            cache.entries.delete(key);
            cache.entries.set(key, { result, bytes });
            cache.bytes += bytes;
            for (const [k, e] of cache.entries) {
              if (cache.entries.size <= MAX_ENTRIES && cache.bytes <= MAX_TOTAL_BYTES) break;
              cache.entries.delete(k);
              cache.bytes -= e.bytes;
            }
          }
          return budget?.settle(Math.max(bytes, ANONYMOUS_MIN_BYTES) - charged);
        },
      };
    },
  };
}
