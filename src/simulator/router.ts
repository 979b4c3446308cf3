import type { RouteDef } from './http-types.js';

interface Compiled {
  def: RouteDef;
  re: RegExp;
  keys: string[];
}

/** Path patterns like `/subscribers/:id`; parameters match digits only (a non-numeric id is no route, as on the real service). */
export class Router {
  readonly #routes: Compiled[] = [];
  readonly #byPath = new Map<string, RouteDef[]>();

  add(defs: readonly RouteDef[]): this {
    for (const def of defs) {
      const same = this.#byPath.get(def.path);
      if (same) same.push(def);
      else this.#byPath.set(def.path, [def]);
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

  /** The routes registered on a path pattern (one per method it accepts), in registration order. */
  onPath(path: string): readonly RouteDef[] {
    return this.#byPath.get(path) ?? [];
  }

  /** The route for method and path; undefined when none (a wrong method included). */
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
