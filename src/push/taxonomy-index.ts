import type { TaxonomyRef } from '../crm/types.js';
import type { TaxonomyInput } from './push-types.js';

export type TaxonomyKind = 'tag' | 'list';

export type ResolveResult = { ids: number[] } | { unknownId: number } | { missing: string[] };

/** Looks tags or lists up by id, or by title or slug (case-insensitive), as the CRM accepts them. */
export class TaxonomyIndex {
  readonly #ids = new Set<number>();
  readonly #byName = new Map<string, number>();

  constructor(
    readonly kind: TaxonomyKind,
    refs: readonly TaxonomyRef[],
  ) {
    for (const ref of refs) this.add(ref);
  }

  add(ref: TaxonomyRef): void {
    this.#ids.add(ref.id);
    // Titles first, then slugs, without overwriting: a title wins over another item's slug.
    for (const name of [ref.title, ref.slug]) {
      const key = name.trim().toLowerCase();
      if (key && !this.#byName.has(key)) this.#byName.set(key, ref.id);
    }
  }

  resolve(refs: readonly TaxonomyInput[]): ResolveResult {
    const ids = new Set<number>();
    const missing: string[] = [];
    for (const ref of refs) {
      if (typeof ref === 'number') {
        if (!this.#ids.has(ref)) return { unknownId: ref };
        ids.add(ref);
        continue;
      }
      // The CRM derives a slug from the title: "Spring Promo" is also found as spring-promo.
      const id = this.#byName.get(ref.toLowerCase()) ?? this.#byName.get(slugify(ref));
      if (id === undefined) missing.push(ref);
      else ids.add(id);
    }
    if (missing.length > 0) return { missing };
    return { ids: [...ids].sort((a, b) => a - b) };
  }
}

/** Lower case, runs of anything but letters and digits as one dash, no dash at either end. */
export function slugify(title: string): string {
  return title
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '');
}
