import { type Assets, addAsset, JS } from './hashed-assets.ts';

/**
 * A page's script as browser ES modules, each a hashed asset (src/server/hashed-assets.ts). A
 * module's imports of its siblings (`from './api.js'`) are rewritten to their hashed names, so a
 * change to one module renames it and every module importing it, up to the entry the page names:
 * a revalidated page sees any change at once, and everything else stays cached for good. A
 * module's name depends on its imports' names, so the modules may not import each other in a
 * cycle; one is refused when the assets are built, not left to fail in the browser.
 */

const SIBLING_IMPORT = /(\b(?:from|import)\s*)(['"])\.\/([\w-]+)\.js\2/g;

/** Adds `entry` and the modules it imports; answers their URLs, each after those it imports. */
export async function addModules(
  assets: Assets,
  prefix: string,
  read: (file: string) => Promise<string>,
  entry: string,
): Promise<string[]> {
  const added = new Map<string, string>();
  const add = async (stem: string, importers: string[]): Promise<string> => {
    if (importers.includes(stem))
      throw new Error(`Modules import each other: ${[...importers, stem].join(' → ')}`);
    const known = added.get(stem);
    if (known) return known;
    const source = await read(`${stem}.js`);
    const names = new Map<string, string>();
    for (const [, , , dep] of source.matchAll(SIBLING_IMPORT))
      if (!names.has(dep)) names.set(dep, (await add(dep, [...importers, stem])).split('/').pop() as string);
    const rewritten = source.replace(
      SIBLING_IMPORT,
      (_all, keyword, quote, dep) => `${keyword}${quote}./${names.get(dep)}${quote}`,
    );
    const url = await addAsset(assets, prefix, stem, 'js', JS, rewritten);
    added.set(stem, url);
    return url;
  };
  await add(entry, []);
  return [...added.values()];
}
