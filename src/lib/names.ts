/**
 * The one name mapping between the two faces (docs/graphql.md, Naming): REST and event data keep
 * the spec's snake_case (`first_name`), GraphQL uses the convention its users expect (GitHub,
 * Shopify, PostGraphile): camelCase fields and arguments (`firstName`), UPPER_CASE enum values.
 * Definitions name things once, in snake_case; GraphQL names are derived here, never written twice.
 * `snakeOf` inverts `camelOf` for every name a definition may use (resource.ts checks the round trip).
 */
export const camelOf = (snake: string): string =>
  snake.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

export const snakeOf = (camel: string): string => camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** A snake_case name whose camelCase form maps back to it (no `_1`, no capitals, no `__`). */
export const isMappableName = (name: string): boolean =>
  /^[a-z][a-z0-9]*(_[a-z][a-z0-9]*)*$/.test(name) && snakeOf(camelOf(name)) === name;

/** An enum value's GraphQL name: `chat.message.sent` → `CHAT_MESSAGE_SENT`, `bank_transfer` → `BANK_TRANSFER`. */
export const enumNameOf = (value: string): string => value.replace(/[^A-Za-z0-9]+/g, '_').toUpperCase();

/** Object keys renamed by `rename`, recursively through arrays and plain objects (GraphQL input → REST body). */
export function renameKeys(value: unknown, rename: (key: string) => string): unknown {
  if (Array.isArray(value)) return value.map((v) => renameKeys(v, rename));
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [rename(k), renameKeys(v, rename)]));
  return value;
}
