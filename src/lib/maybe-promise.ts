/**
 * A value now, or later. The per-request path (token, user, organization, rate-limit counters)
 * is answered from memory nearly every time; returning the value itself instead of a promise
 * spares every request a chain of promises and microtask hops, which at full load cost more
 * than the work they wrap. Only the store reads behind a cache miss are asynchronous.
 *
 * A function returning MaybePromise may also throw synchronously; `chain` and `settle` carry
 * both kinds of failure to the same place.
 */
export type MaybePromise<T> = T | Promise<T>;

/** Applies `next` to the value, at once when it is there, after it resolves when it is not. */
export function chain<T, U>(value: MaybePromise<T>, next: (value: T) => MaybePromise<U>): MaybePromise<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}

/**
 * Runs `work` and reports to a Node-style callback (a Fastify callback hook): synchronously when
 * it finished synchronously, so the request goes on in the same tick.
 */
export function settle(work: () => MaybePromise<unknown>, done: (error?: Error) => void): void {
  let result: MaybePromise<unknown>;
  try {
    result = work();
  } catch (error) {
    done(error as Error);
    return;
  }
  if (result instanceof Promise) result.then(() => done(), done);
  else done();
}
