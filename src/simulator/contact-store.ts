import type { ContactRec } from './model.js';
import { seededContact, seededCore, seededSearchText, type ContactCore } from './seed-data.js';

/**
 * Compact contact storage for up to millions of contacts: seeded contacts are regenerated from
 * (seed, id) on every read; only contacts written since start live in `overrides`. Live ids are
 * kept sorted in a typed array so that id-ordered pages are O(page) and deletes are a memmove.
 */
export class ContactStore {
  #ids: Int32Array;
  #length: number;
  readonly #overrides = new Map<number, ContactRec>();
  readonly #deletedSeeded = new Set<number>();
  readonly #emailIndex = new Map<string, number>();
  /**
   * When a tag or list was attached, by contact id then `tag:7`/`list:3`, only where that differs
   * from the contact's created_at: a pivot row's timestamps are its attach time, and holding one
   * per membership for a million seeded contacts would cost more than the contacts themselves.
   */
  readonly #attachedAt = new Map<number, Map<string, number>>();
  #nextId: number;
  /** Bumped on every write: caches of derived orderings and counts key on it. */
  version = 0;

  constructor(
    private readonly seed: number,
    private readonly seededCount: number,
    private readonly companies: number,
  ) {
    this.#ids = new Int32Array(Math.max(16, seededCount + 1024));
    for (let i = 0; i < seededCount; i++) this.#ids[i] = i + 1;
    this.#length = seededCount;
    this.#nextId = seededCount + 1;
  }

  get size(): number {
    return this.#length;
  }

  /** The id at position `index` in ascending id order. */
  idAt(index: number): number {
    return this.#ids[index] as number;
  }

  /** Index of the first live id >= id. */
  lowerBound(id: number): number {
    let lo = 0;
    let hi = this.#length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.#ids[mid] as number) < id) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  has(id: number): boolean {
    const i = this.lowerBound(id);
    return i < this.#length && this.#ids[i] === id;
  }

  /** The current record (a shared object: copy before changing it). */
  get(id: number): ContactRec | undefined {
    const o = this.#overrides.get(id);
    if (o) return o;
    if (id < 1 || id > this.seededCount || this.#deletedSeeded.has(id)) return undefined;
    return seededContact(this.seed, id, this.seededCount, this.companies);
  }

  /** Status, memberships and stats of a live contact, cheaply (no strings built for seeded ones). */
  core(id: number): ContactCore | undefined {
    const o = this.#overrides.get(id);
    if (o) return o;
    if (id < 1 || id > this.seededCount || this.#deletedSeeded.has(id)) return undefined;
    return seededCore(this.seed, id, this.companies);
  }

  *cores(): IterableIterator<ContactCore & { id: number }> {
    for (let i = 0; i < this.#length; i++) {
      const id = this.#ids[i] as number;
      const c = this.core(id);
      if (c) yield Object.assign(c, { id });
    }
  }

  /** Lower-cased "first last email" as list search reads it. */
  searchText(id: number): string | undefined {
    const o = this.#overrides.get(id);
    if (o) return `${o.firstName ?? ''} ${o.lastName ?? ''} ${o.email}`.toLowerCase();
    if (id < 1 || id > this.seededCount || this.#deletedSeeded.has(id)) return undefined;
    return seededSearchText(this.seed, id);
  }

  findIdByEmail(email: string): number | undefined {
    const key = email.trim().toLowerCase();
    const indexed = this.#emailIndex.get(key);
    if (indexed !== undefined) return indexed;
    // Seeded emails end in their id: first.last{id}@example.test
    const m = /(\d+)@example\.test$/.exec(key);
    if (!m) return undefined;
    const id = Number(m[1]);
    if (this.#overrides.has(id)) return undefined;
    const c = this.get(id);
    return c && c.email === key ? id : undefined;
  }

  allocateId(): number {
    return this.#nextId++;
  }

  /** Inserts or replaces a record. New ids must be larger than every id allocated so far. */
  put(rec: ContactRec): void {
    const old = this.get(rec.id);
    if (old && old.email.toLowerCase() !== rec.email.toLowerCase() && this.#emailIndex.get(old.email.toLowerCase()) === rec.id) {
      this.#emailIndex.delete(old.email.toLowerCase());
    }
    if (!old) this.#append(rec.id);
    this.#overrides.set(rec.id, rec);
    this.#emailIndex.set(rec.email.toLowerCase(), rec.id);
    this.version++;
  }

  remove(id: number): ContactRec | undefined {
    const old = this.get(id);
    if (!old) return undefined;
    const i = this.lowerBound(id);
    this.#ids.copyWithin(i, i + 1, this.#length);
    this.#length--;
    this.#overrides.delete(id);
    this.#attachedAt.delete(id);
    if (id <= this.seededCount) this.#deletedSeeded.add(id);
    if (this.#emailIndex.get(old.email.toLowerCase()) === id) this.#emailIndex.delete(old.email.toLowerCase());
    this.version++;
    return old;
  }

  /** When `c` gained tag or list `objectId` (seeded and created-with memberships date from the contact). */
  attachedAt(c: ContactRec, kind: 'tag' | 'list', objectId: number): number {
    return this.#attachedAt.get(c.id)?.get(`${kind}:${objectId}`) ?? c.createdAt;
  }

  /** Dates the memberships `next` gained over `old` at `at` and forgets those it lost (a detach deletes the pivot row). */
  recordMemberships(old: ContactRec | undefined, next: ContactRec, at: number): void {
    let times = this.#attachedAt.get(next.id);
    for (const [kind, was, now] of [
      ['tag', old?.tags ?? [], next.tags],
      ['list', old?.lists ?? [], next.lists],
    ] as const) {
      for (const x of was) if (!now.includes(x)) times?.delete(`${kind}:${x}`);
      for (const x of now) {
        if (was.includes(x) || at === next.createdAt) continue;
        times ??= new Map();
        times.set(`${kind}:${x}`, at);
      }
    }
    if (times && times.size > 0) this.#attachedAt.set(next.id, times);
    else this.#attachedAt.delete(next.id);
  }

  *values(): IterableIterator<ContactRec> {
    for (let i = 0; i < this.#length; i++) {
      const c = this.get(this.#ids[i] as number);
      if (c) yield c;
    }
  }

  /** Number of contacts held as full objects (written since start). */
  get overrideCount(): number {
    return this.#overrides.size;
  }

  #append(id: number): void {
    if (this.#length > 0 && id <= (this.#ids[this.#length - 1] as number)) {
      throw new Error(`contact ids must grow: ${id} after ${this.#ids[this.#length - 1]}`);
    }
    if (this.#length === this.#ids.length) {
      const grown = new Int32Array(this.#ids.length * 2);
      grown.set(this.#ids);
      this.#ids = grown;
    }
    this.#ids[this.#length++] = id;
  }
}
