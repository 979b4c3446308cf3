/**
 * The deliveries the spool has seen, by delivery id and by body key, in the order they were added.
 * Two open-addressing tables in typed arrays point into a ring of entries; each table slot holds a
 * 32-bit fingerprint of its key, so a lookup of a new key (nearly every delivery) reads one or two
 * slots and no key. Two `Map`s over the retention (a string key and a body key a delivery) cost
 * the receiver's thread some 5 us a delivery (bench/results/notes.md, "Issue 17, the dedupe
 * index"): a lookup of a new key walked a bucket chain through scattered entries and key strings.
 *
 * An entry holds a state: a seq once durable, or an object (an append in flight). Positions only
 * grow; prune drops from the oldest while their state is a seq at or below the given one.
 */
export interface SeenTable<T extends object> {
  /** The state of the entry a delivery id points to, or undefined. */
  byId(deliveryId: string): number | T | undefined;
  /** The same by body key (`bodyKey()`: SHA-256 of the body as a 32-character latin1 string). */
  byBody(bodyKey: string): number | T | undefined;
  /** Adds the newest entry and returns its position. A key already held points to it from now on. */
  add(deliveryId: string, bodyKey: string, state: number | T): number;
  /** Replaces the state of the entry at `pos` (an append that became durable). */
  set(pos: number, state: number | T): void;
  /** Drops the entry at `pos`: its keys are no longer seen (a failed append). */
  remove(pos: number): void;
  /** Drops entries from the oldest while their state is a seq up to `lastSeq`; stops at any other. */
  prune(lastSeq: number): void;
  /** Entries held. */
  readonly size: number;
}

export interface SeenTableOptions {
  /** Tests: the delivery id's 32-bit hash (default FNV-1a), to force collisions. */
  hashId?: (deliveryId: string) => number;
}

const BODY_KEY_LENGTH = 32;
const HOLDS_ID = 1;
const HOLDS_BODY = 2;
const EMPTY = 0;
const TOMBSTONE = -1;

/** FNV-1a over the UTF-16 code units, then murmur3's finalizer so the low bits index well. */
export function hashDeliveryId(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** A body key's first four bytes: SHA-256 output is uniform, so they serve as hash and fingerprint. */
const hashBodyKey = (k: string): number => (k.charCodeAt(0) | (k.charCodeAt(1) << 8) | (k.charCodeAt(2) << 16) | (k.charCodeAt(3) << 24)) >>> 0;

export function createSeenTable<T extends object>(options: SeenTableOptions = {}): SeenTable<T> {
  const hashId = options.hashId ?? hashDeliveryId;
  let cap = 1024;
  // The ring: entry `pos` lives at `pos & (cap - 1)`; positions head..tail-1 are held or removed.
  let head = 0;
  let tail = 0;
  let live = 0;
  let ids: (string | undefined)[] = new Array<string | undefined>(cap);
  let states: (number | T | undefined)[] = new Array<number | T | undefined>(cap);
  let idHashes = new Uint32Array(cap);
  let bodies = new Uint8Array(cap * BODY_KEY_LENGTH);
  // Which of its keys an entry still holds (HOLDS_ID, HOLDS_BODY): a newer entry may take one over,
  // and a rebuild must not give it back.
  let holds = new Uint8Array(cap);
  // The tables: twice the ring's slots. A slot holds EMPTY, TOMBSTONE or a ring index + 1.
  let idSlots = new Int32Array(2 * cap);
  let idPrints = new Uint32Array(2 * cap);
  let bodySlots = new Int32Array(2 * cap);
  let bodyPrints = new Uint32Array(2 * cap);
  let tombstones = 0;

  const bodyAt = (idx: number, key: string): boolean => {
    const at = idx * BODY_KEY_LENGTH;
    for (let i = 0; i < BODY_KEY_LENGTH; i++) if (bodies[at + i] !== key.charCodeAt(i)) return false;
    return true;
  };
  const sameBodies = (a: number, b: number): boolean => {
    for (let i = 0; i < BODY_KEY_LENGTH; i++) if (bodies[a * BODY_KEY_LENGTH + i] !== bodies[b * BODY_KEY_LENGTH + i]) return false;
    return true;
  };
  const bodyHashAt = (idx: number): number => {
    const at = idx * BODY_KEY_LENGTH;
    return (bodies[at]! | (bodies[at + 1]! << 8) | (bodies[at + 2]! << 16) | (bodies[at + 3]! << 24)) >>> 0;
  };

  // Lookups and inserts are written out for each table (no comparison callback): they run twice a
  // delivery on the receiver's thread, and a closure each time was garbage.
  /** The ring index of the entry the delivery id points to, or -1. */
  const findId = (id: string, h: number): number => {
    const mask = idSlots.length - 1;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const s = idSlots[i]!;
      if (s === EMPTY) return -1;
      if (s > 0 && idPrints[i] === h && ids[s - 1] === id) return s - 1;
    }
  };
  /** The ring index of the entry the body key (or ring index `keyAt`'s body, when `key` is undefined) points to, or -1. */
  const findBody = (key: string | undefined, keyAt: number, h: number): number => {
    const mask = bodySlots.length - 1;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const s = bodySlots[i]!;
      if (s === EMPTY) return -1;
      if (s > 0 && bodyPrints[i] === h && (key === undefined ? sameBodies(s - 1, keyAt) : bodyAt(s - 1, key))) return s - 1;
    }
  };
  /**
   * Points slot path `h` to ring index `idx`: the slot of `held` (the ring index holding the key,
   * which gives it up, or -1), else the first free one.
   */
  const put = (slots: Int32Array, prints: Uint32Array, h: number, idx: number, held: number, flag: number): void => {
    const mask = slots.length - 1;
    let free = -1;
    holds[idx]! |= flag;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const s = slots[i]!;
      if (held >= 0 && s === held + 1) {
        slots[i] = idx + 1;
        holds[held]! &= ~flag;
        return;
      }
      if (s === EMPTY) {
        if (free < 0) free = i;
        break;
      }
      if (s === TOMBSTONE && free < 0) free = i;
    }
    if (slots[free] === TOMBSTONE) tombstones--;
    slots[free] = idx + 1;
    prints[free] = h;
  };
  /** Frees the key's slot if it points to ring index `idx` (a newer entry may hold the key). */
  const drop = (slots: Int32Array, h: number, idx: number): void => {
    const mask = slots.length - 1;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const s = slots[i]!;
      if (s === EMPTY) return;
      if (s === idx + 1) {
        slots[i] = TOMBSTONE;
        tombstones++;
        return;
      }
    }
  };

  /** Enters both keys of ring index `idx`; a key another entry holds moves to this one. */
  const index = (idx: number): void => {
    const h = idHashes[idx]!;
    put(idSlots, idPrints, h, idx, findId(ids[idx]!, h), HOLDS_ID);
    const b = bodyHashAt(idx);
    put(bodySlots, bodyPrints, b, idx, findBody(undefined, idx, b), HOLDS_BODY);
  };
  /** Places a key known to be in no slot yet (a rebuild: each key has one holder) at the first empty slot of its path. */
  const place = (slots: Int32Array, prints: Uint32Array, h: number, idx: number): void => {
    const mask = slots.length - 1;
    let i = h & mask;
    while (slots[i] !== EMPTY) i = (i + 1) & mask;
    slots[i] = idx + 1;
    prints[i] = h;
  };
  /**
   * New tables of `2 * cap` slots with the keys entries still hold. A key has one holder at most,
   * so each goes to the first empty slot on its path with no comparison: at a million entries a
   * rebuild that looked each key up first held the receiver's thread for 400 ms.
   */
  const rebuild = (): void => {
    idSlots = new Int32Array(2 * cap);
    idPrints = new Uint32Array(2 * cap);
    bodySlots = new Int32Array(2 * cap);
    bodyPrints = new Uint32Array(2 * cap);
    tombstones = 0;
    for (let pos = head; pos < tail; pos++) {
      const idx = pos & (cap - 1);
      const held = holds[idx]!;
      if (held & HOLDS_ID) place(idSlots, idPrints, idHashes[idx]!, idx);
      if (held & HOLDS_BODY) place(bodySlots, bodyPrints, bodyHashAt(idx), idx);
    }
  };
  const grow = (): void => {
    const oldCap = cap;
    const [oldIds, oldStates, oldHashes, oldBodies, oldHolds] = [ids, states, idHashes, bodies, holds];
    cap *= 2;
    ids = new Array<string | undefined>(cap);
    states = new Array<number | T | undefined>(cap);
    idHashes = new Uint32Array(cap);
    bodies = new Uint8Array(cap * BODY_KEY_LENGTH);
    holds = new Uint8Array(cap);
    // The ring is full: positions head..tail-1 fill the old ring once, from head's index round to
    // it again, and land in the new one in at most two runs. Typed arrays are copied a run at a time.
    for (let pos = head; pos < tail;) {
      const from = pos & (oldCap - 1);
      const to = pos & (cap - 1);
      const run = Math.min(oldCap - from, cap - to, tail - pos);
      for (let k = 0; k < run; k++) {
        ids[to + k] = oldIds[from + k];
        states[to + k] = oldStates[from + k];
      }
      idHashes.set(oldHashes.subarray(from, from + run), to);
      holds.set(oldHolds.subarray(from, from + run), to);
      bodies.set(oldBodies.subarray(from * BODY_KEY_LENGTH, (from + run) * BODY_KEY_LENGTH), to * BODY_KEY_LENGTH);
      pos += run;
    }
    rebuild();
  };

  const removeAt = (pos: number): void => {
    const idx = pos & (cap - 1);
    if (pos < head || pos >= tail || states[idx] === undefined) return;
    if (holds[idx]! & HOLDS_ID) drop(idSlots, idHashes[idx]!, idx);
    if (holds[idx]! & HOLDS_BODY) drop(bodySlots, bodyHashAt(idx), idx);
    holds[idx] = 0;
    ids[idx] = undefined;
    states[idx] = undefined;
    live--;
    // Tombstones lengthen every probe that passes them: past a quarter of the slots, start clean.
    if (tombstones > cap / 2) rebuild();
  };

  return {
    byId(deliveryId) {
      const idx = findId(deliveryId, hashId(deliveryId));
      return idx < 0 ? undefined : states[idx];
    },
    byBody(bodyKey) {
      if (bodyKey.length !== BODY_KEY_LENGTH) throw new Error(`seen table: a body key has ${BODY_KEY_LENGTH} characters, got ${bodyKey.length}`);
      const idx = findBody(bodyKey, -1, hashBodyKey(bodyKey));
      return idx < 0 ? undefined : states[idx];
    },
    add(deliveryId, bodyKey, state) {
      if (bodyKey.length !== BODY_KEY_LENGTH) throw new Error(`seen table: a body key has ${BODY_KEY_LENGTH} characters, got ${bodyKey.length}`);
      if (tail - head === cap) grow();
      const pos = tail++;
      const idx = pos & (cap - 1);
      ids[idx] = deliveryId;
      states[idx] = state;
      idHashes[idx] = hashId(deliveryId);
      const at = idx * BODY_KEY_LENGTH;
      for (let i = 0; i < BODY_KEY_LENGTH; i++) bodies[at + i] = bodyKey.charCodeAt(i);
      holds[idx] = 0;
      live++;
      index(idx);
      return pos;
    },
    set(pos, state) {
      const idx = pos & (cap - 1);
      if (pos >= head && pos < tail && states[idx] !== undefined) states[idx] = state;
    },
    remove: removeAt,
    prune(lastSeq) {
      while (head < tail) {
        const s = states[head & (cap - 1)];
        if (s !== undefined && (typeof s !== 'number' || s > lastSeq)) break;
        removeAt(head);
        head++;
      }
    },
    get size() {
      return live;
    },
  };
}
