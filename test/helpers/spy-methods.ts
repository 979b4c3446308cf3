type Method = (...args: unknown[]) => Promise<unknown>;

/**
 * `target` with the methods named in `wraps` wrapped: each wrapper gets the original (bound to
 * `target`) and the call's arguments. Other properties pass through.
 */
export function spyMethods<T extends object>(target: T, wraps: Record<string, (original: Method, ...args: unknown[]) => unknown>): T {
  return new Proxy(target, {
    get(t, key) {
      const v = Reflect.get(t, key, t) as unknown;
      if (typeof v !== 'function') return v;
      const original = (v as Method).bind(t);
      const wrap = typeof key === 'string' ? wraps[key] : undefined;
      return wrap ? (...args: unknown[]) => wrap(original, ...args) : original;
    },
  });
}
