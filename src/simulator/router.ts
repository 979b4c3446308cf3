import type { RouteDef } from './http-types.js';

interface Compiled {
  def: RouteDef;
  re: RegExp;
  keys: string[];
}

/** Path patterns like `/subscribers/:id`; parameters match digits only (a non-numeric id is no route, as on the real service). */
export class Router {
  readonly #routes: Compiled[] = [];

  add(defs: readonly RouteDef[]): this {
    for (const def of defs) {
      const keys: string[] = [];
      const src = def.path
        .replace(/:([A-Za-z]+)/g, (_, k: string) => {
          keys.push(k);
          return '(\\d{1,12})';
        })
        .replace(/\*$/, '[^?#]+');
      this.#routes.push({ def, re: new RegExp(`^${src}/?$`), keys });
    }
    return this;
  }

  /** The route for method and path; `methodMismatch` when only the method is wrong. */
  match(method: string, path: string): { def: RouteDef; params: Record<string, string> } | undefined {
    for (const r of this.#routes) {
      if (r.def.method !== method) continue;
      const m = r.re.exec(path);
      if (!m) continue;
      const params: Record<string, string> = {};
      r.keys.forEach((k, i) => {
        params[k] = m[i + 1] as string;
      });
      return { def: r.def, params };
    }
    return undefined;
  }
}
