import { createHash } from 'node:crypto';
import type { DocumentNode, ExecutionResult, GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { AppError } from '../lib/errors.ts';
import { rateLimitRefusals } from '../lib/metrics.ts';
import { currentRequest } from '../lib/request-context.ts';
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
 * neither printed nor hashed; an answer's key is a SHA-256 of that document's id, the operation
 * name and the variables (`introspectionCacheKey`), so its size is bounded whatever the variables.
 * Bounded: a few dozen answers, a few MiB of JSON and keys, the least recently used dropped
 * first; an answer with errors or larger than MAX_ENTRY_BYTES is not kept, nor a key's document
 * of a shape refused without a key (aliases, several roots, deeper). Requests for an answer being
 * made wait for it (it is made once), and new answers without a key are made at most
 * MAX_NEW_ANONYMOUS_ANSWERS at once.
 */
const MAX_ENTRIES = 32;
const MAX_TOTAL_BYTES = 4 << 20;
const MAX_ENTRY_BYTES = 2 << 20;

/**
 * New answers without a key made at once, in the whole process: past it a request without a key
 * that the cache cannot answer is a 429 with `Retry-After: 1` (a key is bounded by its points). A
 * request for an answer being made waits for it and is not counted.
 */
export const MAX_NEW_ANONYMOUS_ANSWERS = 2;

interface Entry {
  result: ExecutionResult;
  bytes: number;
}

/** Answers served from the cache and executed (tests read them: a kept answer is not executed). */
export const introspectionCacheStats = { hits: 0, executed: 0, busy: 0 };

interface Cache {
  entries: Map<string, Entry>;
  /** Bytes held: each answer's JSON and its key. */
  bytes: number;
  /** Answers being made, by key: a request for one waits for it instead of making it again. */
  making: Map<string, Promise<void>>;
}

const caches = new WeakMap<GraphQLSchema, Cache>();
const shapes = new WeakMap<DocumentNode, { id: number; kept: boolean; roots: number }>();
let nextId = 0;
/** New answers without a key being made (MAX_NEW_ANONYMOUS_ANSWERS). */
let makingAnonymous = 0;

/**
 * The key of an answer: a SHA-256 of the document (its id, the cache being the schema's), the
 * operation name and the variables' JSON. Bounded (64 characters) whatever the variables' size,
 * which is not counted in the answers' bytes.
 */
export function introspectionCacheKey(
  documentId: number,
  operationName: string | null | undefined,
  variables: unknown,
): string {
  return createHash('sha256')
    .update(JSON.stringify([documentId, operationName ?? null, variables ?? {}]))
    .digest('hex');
}

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

function cacheOf(schema: GraphQLSchema): Cache {
  let cache = caches.get(schema);
  if (!cache) {
    cache = { entries: new Map(), bytes: 0, making: new Map() };
    caches.set(schema, cache);
  }
  return cache;
}

/** Keeps an answer, the least recently used dropped while the cache holds too much. */
function keep(cache: Cache, key: string, result: ExecutionResult, bytes: number) {
  const drop = (k: string) => {
    const e = cache.entries.get(k);
    if (!e) return;
    cache.entries.delete(k);
    cache.bytes -= e.bytes + k.length;
  };
  // The same document run twice at once: kept once.
  drop(key);
  cache.entries.set(key, { result, bytes });
  cache.bytes += bytes + key.length;
  for (const k of cache.entries.keys()) {
    if (cache.entries.size <= MAX_ENTRIES && cache.bytes <= MAX_TOTAL_BYTES) break;
    drop(k);
  }
}

/**
 * What a new answer with a `__schema` or `__type` root is charged before it is made (at most the
 * whole budget): about the largest an anonymous document can ask for (GraphiQL's full
 * introspection is 360 KB, the largest found 600 KB). Charged before, so that many requests at
 * once from one address cannot all pass a budget not yet spent; the difference is settled once
 * the answer's size is known. Without a root (`{ __typename }`) it is ANONYMOUS_MIN_BYTES.
 */
export const NEW_ANSWER_BYTES = 512 * 1024;

/**
 * `anonymousBytesPerWindow`: the address's budget (src/lib/limits.ts). Placed after the plugin
 * that sets the executor (src/server/graphql-pipeline.ts): a new answer wraps it, to know when
 * it is made.
 */
export function introspectionCachePlugin(anonymousBytesPerWindow: number): Plugin {
  const newAnswer = Math.min(NEW_ANSWER_BYTES, Math.max(anonymousBytesPerWindow, ANONYMOUS_MIN_BYTES));
  return {
    async onExecute({ args, executeFn, setExecuteFn, setResultAndStopExecution }) {
      const doc = documentOf(args.document);
      if (!doc.kept) return;
      const cache = cacheOf(args.schema);
      const key = introspectionCacheKey(doc.id, args.operationName, args.variableValues);
      const stop = (e: unknown) => setResultAndStopExecution({ errors: [toGraphQLError(e)] });
      // A request without a key has spent ANONYMOUS_MIN_BYTES already (its cost, graphql-limits.ts).
      const budget = anonymousBudget();
      // The same answer being made: wait for it rather than make it again.
      const making = cache.making.get(key);
      if (making) await making;
      const kept = cache.entries.get(key);
      if (kept) {
        try {
          await budget?.spend(kept.bytes - ANONYMOUS_MIN_BYTES);
        } catch (e) {
          return stop(e);
        }
        // Most recently used last: the first entry is the one to drop (unless dropped meanwhile).
        if (cache.entries.get(key) === kept) {
          cache.entries.delete(key);
          cache.entries.set(key, kept);
        }
        introspectionCacheStats.hits++;
        setResultAndStopExecution(kept.result);
        return;
      }
      // A new answer. Without a key, only so many at once in the process.
      let counted = false;
      if (budget) {
        if (makingAnonymous >= MAX_NEW_ANONYMOUS_ANSWERS) {
          introspectionCacheStats.busy++;
          rateLimitRefusals.inc({ limit: 'anonymous' });
          currentRequest()?.setHeader('Retry-After', '1');
          return stop(
            new AppError(
              'rate_limited',
              `${MAX_NEW_ANONYMOUS_ANSWERS} new introspection answers without a key are being made; this one is not kept yet. Retry after 1 s, or send an API key.`,
            ),
          );
        }
        makingAnonymous++;
        counted = true;
      }
      let made!: () => void;
      const done = new Promise<void>((resolve) => {
        made = resolve;
      });
      cache.making.set(key, done);
      const finish = () => {
        if (counted) makingAnonymous--;
        counted = false;
        if (cache.making.get(key) === done) cache.making.delete(key);
        made();
      };
      const charged = doc.roots > 0 ? newAnswer : ANONYMOUS_MIN_BYTES;
      try {
        await budget?.spend(charged - ANONYMOUS_MIN_BYTES);
      } catch (e) {
        finish();
        return stop(e);
      }
      introspectionCacheStats.executed++;
      setExecuteFn(async (execArgs) => {
        let result: Awaited<ReturnType<typeof executeFn>>;
        let bytes = 0;
        try {
          result = await executeFn(execArgs);
          if (Symbol.asyncIterator in result) return result;
          bytes = Buffer.byteLength(JSON.stringify(result));
          if (!result.errors?.length && bytes <= MAX_ENTRY_BYTES) keep(cache, key, result, bytes);
        } finally {
          // Kept before the requests waiting for it look.
          finish();
        }
        await budget?.settle(Math.max(bytes, ANONYMOUS_MIN_BYTES) - charged);
        return result;
      });
      // Should the executor not be called (a later plugin answering), the answer is not made.
      return { onExecuteDone: finish };
    },
  };
}
