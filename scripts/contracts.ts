/**
 * Writes the committed API contracts at the repo root from the code:
 *   schema.graphql  the Public GraphQL schema (/graphql)
 *   openapi.json    the /v1 OpenAPI document (what /v1/openapi.json serves)
 *   docs/events.md  its Samples, between their markers (scripts/events-doc.ts)
 *   packages/sdk/src/generated/  the SDK's types and documents, made from the two above (scripts/sdk.ts)
 *
 *   node scripts/contracts.ts           regenerate them
 *   node scripts/contracts.ts --check   write nothing; exit 1 when a committed file is stale
 *
 * No database is needed: the SOFA router is built with a context factory that is never called.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { printSchema } from 'graphql';
import { openApiDocument } from '../src/rest/openapi.ts';
import { createOpenApiSource } from '../src/rest/sofa.ts';
import { schemas } from '../src/schema/index.ts';
import { withSamples } from './events-doc.ts';
import { generateSdk } from './sdk.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export function generateContracts(): Record<'schema.graphql' | 'openapi.json' | 'docs/events.md', string> {
  const { publicSchema, restSchema } = schemas();
  const router = createOpenApiSource(restSchema);
  return {
    'schema.graphql': `${printSchema(publicSchema)}\n`,
    'openapi.json': `${JSON.stringify(openApiDocument(router), null, 2)}\n`,
    'docs/events.md': withSamples(readFileSync(path.join(root, 'docs/events.md'), 'utf8')),
  };
}

async function main(argv: string[]): Promise<number> {
  const check = argv.includes('--check');
  const unknown = argv.filter((a) => a !== '--check');
  if (unknown.length) {
    console.error(
      `contracts: unknown argument(s) ${unknown.join(' ')}. Usage: node scripts/contracts.ts [--check]`,
    );
    return 2;
  }
  const contracts = generateContracts();
  const files = { ...contracts, ...(await generateSdk(contracts)) };
  const stale: string[] = [];
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(root, name);
    const current = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
    if (current === content) continue;
    stale.push(current === undefined ? `${name} (missing)` : name);
    if (check) continue;
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
  if (check) {
    if (stale.length) {
      console.error(
        `contracts: ${stale.join(', ')} ${stale.length === 1 ? 'is' : 'are'} out of date with the code.\n` +
          'Run `npm run contracts` (node scripts/contracts.ts) and commit the result.',
      );
      return 1;
    }
    console.log(`contracts: ${Object.keys(files).join(', ')} are up to date.`);
    return 0;
  }
  console.log(
    stale.length
      ? `contracts: wrote ${stale.join(', ')}.`
      : `contracts: ${Object.keys(files).join(', ')} already up to date.`,
  );
  return 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main(process.argv.slice(2));
}
