import { LAKE_TABLES } from './lake-layout.js';

const isWhole = (table: string): boolean => LAKE_TABLES[table]?.kind === 'whole';

/**
 * Which whole-layout lake tables (lake-layout.ts) one writer handle knows to equal their published
 * copy, so a publish skips them instead of hashing each whole table every time. The bucket and
 * append tables need none of this: their loads mark `_lake_dirty` in the same transaction.
 *
 * Kept in memory on purpose, and conservative: a new handle knows nothing clean, so its first
 * publish hashes every whole table as before. A write that a crash cut off before its publish is
 * therefore found by the next worker's first publish, and no mark needs to be durable. Only a
 * table this handle hashed or published is clean, until a write through the handle touches it;
 * a write whose tables the handle cannot name forgets everything (`forgetAll`).
 */
export class WholeTableMarks {
  readonly #clean = new Set<string>();

  /** `tables` were (or may have been) written: the next publish hashes them. */
  written(tables: readonly string[]): void {
    for (const t of tables) this.#clean.delete(t);
  }

  /** A write to tables unknown: the next publish hashes every whole table. */
  forgetAll(): void {
    this.#clean.clear();
  }

  /** The whole table equals its published copy (just hashed or published). */
  published(table: string): void {
    if (isWhole(table)) this.#clean.add(table);
  }

  /** True when a publish may skip `table` without hashing it. */
  isClean(table: string): boolean {
    return this.#clean.has(table);
  }
}
