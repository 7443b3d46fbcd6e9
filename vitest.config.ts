import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // graphql must be one module instance, or `instanceof` checks fail ("another module or realm").
    alias: { graphql: 'graphql/index.js' },
  },
  test: {
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    include: ['test/**/*.test.ts'],
  },
});
