interface Cache<K, V> {
  get(key: K): V | undefined;
  set(key: K, value: V): unknown;
}

/** The value cached under `key`, made by `make` on first use. */
export function cached<K, V>(cache: Cache<K, V>, key: K, make: () => V): V {
  let v = cache.get(key);
  if (v === undefined) {
    v = make();
    cache.set(key, v);
  }
  return v;
}

/** A cache per `outer` (weakly held) of values per `inner` key: `cached2(m, shape, key, make)`. */
export function cached2<O extends object, K, V>(
  caches: WeakMap<O, Cache<K, V>>,
  outer: O,
  inner: K,
  make: () => V,
  newCache: () => Cache<K, V> = () => new Map<K, V>(),
): V {
  return cached(cached(caches, outer, newCache), inner, make);
}
