/** Ids up to this go in the bitmap (at most 4 MiB); larger ones, and strings, in a Set. */
const MAX_BIT_ID = 2 ** 25 - 1;

/**
 * The distinct row ids of a scan, with a Set's semantics. Ids are usually auto-increment integers:
 * those go in a bitmap (a bit each, in id order) instead of a hash set, whose random accesses miss
 * the cache on every row once a scan has read a few thousand rows between JSON pages.
 */
export class IdSet {
  private bits = new Uint32Array(256);
  private bitCount = 0;
  private readonly others = new Set<number | string>();

  get size(): number {
    return this.bitCount + this.others.size;
  }

  has(id: number | string): boolean {
    if (typeof id === 'number' && id >= 0 && id <= MAX_BIT_ID && Number.isInteger(id)) {
      const word = id >>> 5;
      return word < this.bits.length && (this.bits[word]! & (1 << (id & 31))) !== 0;
    }
    return this.others.has(id);
  }

  /** Adds `id`; false when it was there already. */
  add(id: number | string): boolean {
    if (typeof id === 'number' && id >= 0 && id <= MAX_BIT_ID && Number.isInteger(id)) {
      const word = id >>> 5;
      if (word >= this.bits.length) this.grow(word);
      const mask = 1 << (id & 31);
      const cur = this.bits[word]!;
      if ((cur & mask) !== 0) return false;
      this.bits[word] = cur | mask;
      this.bitCount++;
      return true;
    }
    const size = this.others.size;
    this.others.add(id);
    return this.others.size !== size;
  }

  private grow(word: number): void {
    let length = this.bits.length;
    while (length <= word) length *= 2;
    const bits = new Uint32Array(length);
    bits.set(this.bits);
    this.bits = bits;
  }
}
