import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate } from '@graphql-codegen/cli';
import { codegenConfig } from '../examples/dashboard-client/codegen.ts';

/**
 * The typed client's generated files (examples/dashboard-client/src/gql) and how they are compared
 * with a served schema's: shared by scripts/typed-client.ts and test/typed-client.test.ts, so a
 * stale client fails the tests too, not only `npm run check`.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const generated = path.join(root, 'examples/dashboard-client/src/gql');

/** The client preset's files, generated from the schema served at `graphqlUrl`. */
export async function generateTypedClient(graphqlUrl: string): Promise<Map<string, string>> {
  const files: { filename: string; content: string }[] = await generate(
    { ...codegenConfig(graphqlUrl), cwd: root, silent: true },
    false,
  );
  return new Map(files.map((f) => [path.resolve(root, f.filename), f.content]));
}

export function filesOnDisk(): Map<string, string> {
  if (!existsSync(generated)) return new Map();
  return new Map(
    readdirSync(generated).map((f) => [
      path.join(generated, f),
      readFileSync(path.join(generated, f), 'utf8'),
    ]),
  );
}

/**
 * A generated file less its doc comments, which carry the schema's descriptions: the committed
 * types are held to the served schema, not their prose, so rewording a description does not fail
 * (`npm run typed-client` still copies the new text).
 */
function withoutDocComments(content: string | undefined): string | undefined {
  return content?.replace(/^[ \t]*\/\*\*[\s\S]*?\*\/[ \t]*\n/gm, '');
}

/** The files that differ (`stale`), and those whose types differ (`wrongTypes`), relative to the root. */
export function compareTypedClient(
  fresh: Map<string, string>,
  current: Map<string, string>,
): { stale: string[]; wrongTypes: string[] } {
  const files = [...new Set([...fresh.keys(), ...current.keys()])];
  return {
    stale: files.filter((f) => fresh.get(f) !== current.get(f)).map((f) => path.relative(root, f)),
    wrongTypes: files
      .filter((f) => withoutDocComments(fresh.get(f)) !== withoutDocComments(current.get(f)))
      .map((f) => path.relative(root, f)),
  };
}
