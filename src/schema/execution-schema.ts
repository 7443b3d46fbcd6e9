import { MapperKind, mapSchema } from '@graphql-tools/utils';
import {
  type DocumentNode,
  type FieldNode,
  type GraphQLSchema,
  Kind,
  TypeInfo,
  visit,
  visitWithTypeInfo,
} from 'graphql';

/**
 * What the compiled executor runs a Public document on (src/lib/compiled-execute.ts), so that
 * GraphQL's camelCase names cost nothing. A Public field that renames a REST key (`firstName`
 * for the presented row's `first_name`: `namedPerFace`, src/schema/resource-types.ts) needs a
 * resolver, and graphql-jit runs every field with a resolver as a separate deferred call, while
 * it reads a field without one inline from its parent. So the document is executed as
 * `firstName: first_name` on a twin of the schema whose renamed fields carry the REST name and
 * no resolver: the answer has the names the client asked for, read inline. Validation, cost and
 * introspection see the Public schema; a document that introspects runs on it as it is.
 */
export interface ExecutionTwin {
  schema: GraphQLSchema;
  /** The document as the twin runs it, or null when it must run on the Public schema. */
  documentFor(document: DocumentNode): DocumentNode | null;
}

/** The REST key a Public field reads, where the names differ (set by `namedPerFace`). */
const restNameOf = (extensions: unknown): string | undefined => {
  const name = (extensions as { restName?: unknown } | undefined)?.restName;
  return typeof name === 'string' ? name : undefined;
};

/**
 * A field whose resolver returns its parent's property of the field's own name, unchanged (a
 * connection's edges and pageInfo, an edge's node, a node's id): the twin reads it inline, where
 * graphql-jit would call the resolver for every edge and every node (a promise each for Pothos'
 * node ids).
 */
const isInline = (extensions: unknown): boolean =>
  (extensions as { inline?: unknown } | undefined)?.inline === true;

export function executionTwin(publicSchema: GraphQLSchema): ExecutionTwin {
  const schema = mapSchema(publicSchema, {
    [MapperKind.OBJECT_FIELD]: (config) => {
      const rest = restNameOf(config.extensions);
      if (!rest) return isInline(config.extensions) ? { ...config, resolve: undefined } : config;
      // A plain expose of the REST key becomes an inline read; a field with its own resolver keeps it.
      const plain = (config.extensions as { pothosExposedField?: unknown }).pothosExposedField === rest;
      return [rest, plain ? { ...config, resolve: undefined } : config];
    },
  });
  const rewritten = new WeakMap<DocumentNode, DocumentNode | null>();
  return {
    schema,
    documentFor(document) {
      let out = rewritten.get(document);
      if (out === undefined) {
        out = introspects(document) ? null : restNamed(publicSchema, document);
        rewritten.set(document, out);
      }
      return out;
    },
  };
}

function restNamed(schema: GraphQLSchema, document: DocumentNode): DocumentNode {
  const typeInfo = new TypeInfo(schema);
  return visit(
    document,
    visitWithTypeInfo(typeInfo, {
      // On leave: the children were visited with the Public field's type.
      Field: {
        leave(node: FieldNode) {
          const rest = restNameOf(typeInfo.getFieldDef()?.extensions);
          if (!rest) return undefined;
          return {
            ...node,
            alias: node.alias ?? { kind: Kind.NAME, value: node.name.value },
            name: { kind: Kind.NAME, value: rest },
          };
        },
      },
    }),
  );
}

function introspects(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    Field(node) {
      if (node.name.value === '__schema' || node.name.value === '__type') found = true;
    },
  });
  return found;
}
