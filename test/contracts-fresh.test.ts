import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { generateContracts } from '../scripts/contracts.ts';

/**
 * The committed contracts are the code's: a change to the schema without `npm run contracts`
 * fails the tests, not only `npm run check` (test/openapi.test.ts holds openapi.json the same way;
 * test/typed-client.test.ts the typed client).
 */
it('schema.graphql is what the code serves (regenerate with `npm run contracts`)', () => {
  const committed = readFileSync(new URL('../schema.graphql', import.meta.url), 'utf8');
  expect(
    committed === generateContracts()['schema.graphql'],
    'run `npm run contracts` and commit schema.graphql',
  ).toBe(true);
});
