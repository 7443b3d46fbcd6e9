import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CodegenConfig } from '@graphql-codegen/cli';

/**
 * GraphQL Code Generator's client preset, as a dashboard developer runs it against the service:
 *
 *   GRAPHQL_URL=http://127.0.0.1:4000/graphql npx graphql-codegen --config examples/dashboard-client/codegen.ts
 *
 * The schema is the served /graphql (introspection needs no key); scripts/typed-client.ts runs the
 * same config against a service it starts itself. Paths are this file's own, so it works from any
 * working directory.
 */
const here = path.dirname(fileURLToPath(import.meta.url));

export function codegenConfig(schema: string = process.env.GRAPHQL_URL ?? 'http://127.0.0.1:4000/graphql') {
  return {
    schema,
    documents: [path.join(here, 'src/operations.ts')],
    // An operation the generator cannot see would compile as `unknown`: fail instead.
    ignoreNoDocuments: false,
    generates: {
      [path.join(here, 'src/gql/')]: {
        preset: 'client',
        presetConfig: { fragmentMasking: false },
        config: {
          // Documents as typed strings: fetch and graphql-ws send them as they are, so the client
          // needs no GraphQL parser at run time.
          documentMode: 'string',
          // Node runs the generated files as TypeScript (type stripping): type-only imports,
          // `.ts` import paths, and string unions instead of TypeScript enums.
          useTypeImports: true,
          importExtension: '.ts',
          enumsAsTypes: true,
          // A scalar without a mapping here fails generation instead of becoming `any`.
          strictScalars: true,
          scalars: { JSON: 'unknown' },
        },
      },
    },
  } satisfies CodegenConfig;
}

export default codegenConfig();
