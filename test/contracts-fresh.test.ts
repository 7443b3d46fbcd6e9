import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { generateContracts } from '../scripts/contracts.ts';
import { generateSdk } from '../scripts/sdk.ts';

/**
 * The committed contracts are the code's: a change to the schema without `npm run contracts`
 * fails the tests, not only `npm run check` (test/openapi.test.ts holds openapi.json the same way).
 */
const committed = (name: string) => readFileSync(new URL(`../${name}`, import.meta.url), 'utf8');

it('schema.graphql is what the code serves (regenerate with `npm run contracts`)', () => {
  expect(
    committed('schema.graphql') === generateContracts()['schema.graphql'],
    'run `npm run contracts` and commit schema.graphql',
  ).toBe(true);
});

it("the SDK's generated files are what the committed contracts generate (`npm run contracts`)", async () => {
  const files = await generateSdk({
    'openapi.json': committed('openapi.json'),
    'schema.graphql': committed('schema.graphql'),
  });
  const stale = Object.entries(files).filter(([name, content]) => committed(name) !== content);
  expect(
    stale.map(([name]) => name),
    'run `npm run contracts` and commit packages/sdk/src/generated',
  ).toEqual([]);
});
