import type { MaybePromise } from '../lib/maybe-promise.ts';

/** Rows kept per cache; beyond this the oldest go first. */
const DEFAULT_MAX_ENTRIES = 10_000;

/**
 * Rows read on nearly every request (the user behind a token, an organization) are reused
 * until the store may have changed (Store.changeStamp), so a change made by this process or
 * by another one (`dragnet user disable` while the server runs) is seen by the very next
 * request. Where the store cannot tell cheaply (changeStamp null), every call reads.
 * Values are frozen: they are shared between callers. A hit is returned as the value itself,
 * not a promise (see lib/maybe-promise.ts).
 */
export function createReadCache<K, V>(changeStamp: () => string | null, maxEntries = DEFAULT_MAX_ENTRIES) {
  const entries = new Map<K, { stamp: string; value: V }>();
  return {
    get(key: K, load: () => Promise<V>): MaybePromise<V> {
      // Taken before reading, so a change that lands while the row is read makes it stale.
      const stamp = changeStamp();
      if (stamp === null) return load();
      const known = entries.get(key);
      if (known && known.stamp === stamp) return known.value;
      return load().then((loaded) => {
        const value = Object.freeze(loaded);
        entries.delete(key);
        if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!);
        entries.set(key, { stamp, value });
        return value;
      });
    },
  };
}
