import { describe, expect, it } from 'vitest';
import type { Assets } from '../src/server/hashed-assets.ts';
import { addModules } from '../src/server/hashed-modules.ts';

/** A page's ES modules as hashed assets: imports rewritten to hashed names, a change renaming its importers. */
const files = (sources: Record<string, string>) => async (file: string) => {
  const source = sources[file];
  if (source === undefined) throw new Error(`no ${file}`);
  return source;
};

const build = async (sources: Record<string, string>) => {
  const assets: Assets = new Map();
  const urls = await addModules(assets, '/p/assets/', files(sources), 'main');
  const text = (url: string) => assets.get(url.slice('/p/assets/'.length))?.body.toString();
  return { urls, text };
};

const APP = {
  'main.js': "import { a } from './a.js';\nimport { b } from \"./b.js\";\nimport './c.js';\na(b);\n",
  'a.js': "import { b } from './b.js';\nexport const a = (x) => b(x);\n",
  'b.js': 'export const b = (x) => x;\n',
  'c.js': "document.title = 'c';\n",
};

describe('addModules', () => {
  it('serves each module once under a hashed name, its sibling imports rewritten to those names', async () => {
    const { urls, text } = await build(APP);
    const short = urls.map((u) => u.replace(/\.[0-9a-f]{16}\./, '.*.'));
    // Each after what it imports; the entry last.
    expect(short).toEqual([
      '/p/assets/b.*.js',
      '/p/assets/a.*.js',
      '/p/assets/c.*.js',
      '/p/assets/main.*.js',
    ]);
    const [b, a, c, main] = urls.map((u) => u.split('/').pop());
    expect(text(urls[3])).toBe(
      `import { a } from './${a}';\nimport { b } from "./${b}";\nimport './${c}';\na(b);\n`,
    );
    expect(text(urls[1])).toBe(`import { b } from './${b}';\nexport const a = (x) => b(x);\n`);
    expect(main).toMatch(/^main\.[0-9a-f]{16}\.js$/);
  });

  it('renames a changed module and every module importing it, and no other', async () => {
    const before = await build(APP);
    const after = await build({ ...APP, 'b.js': 'export const b = (x) => x + 1;\n' });
    const changed = before.urls.map((u, i) => u !== after.urls[i]);
    // b changed; a and main import it; c does not.
    expect(changed).toEqual([true, true, false, true]);
  });

  it('refuses modules that import each other', async () => {
    await expect(
      build({ 'main.js': "import './a.js';\n", 'a.js': "import './b.js';\n", 'b.js': "import './a.js';\n" }),
    ).rejects.toThrow('Modules import each other: main → a → b → a');
  });
});
