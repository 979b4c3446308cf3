import { describe, expect, it } from 'vitest';
import { createRng } from '../../src/simulator/rng.js';
import { createSeenTable, hashDeliveryId } from '../../src/webhooks/seen-table.js';
import { bodyKey } from '../../src/webhooks/spool-recovery.js';

/** A body key as the spool makes one. */
const key = (text: string): string => bodyKey(Buffer.from(text));

interface InFlight {
  name: string;
}

describe('the seen table', () => {
  it('finds each delivery by id and by body, in flight and durable, and nothing else', () => {
    const seen = createSeenTable<InFlight>();
    const inFlight = { name: 'a' };
    const pos = seen.add('d-a', key('a'), inFlight);
    seen.add('d-b', key('b'), 2);
    expect(seen.byId('d-a')).toBe(inFlight);
    expect(seen.byBody(key('a'))).toBe(inFlight);
    seen.set(pos, 1);
    expect(seen.byId('d-a')).toBe(1);
    expect(seen.byBody(key('b'))).toBe(2);
    expect(seen.byId('d-c')).toBeUndefined();
    expect(seen.byBody(key('c'))).toBeUndefined();
    expect(seen.size).toBe(2);
    expect(() => seen.byBody('short')).toThrow(/32 characters/);
  });

  it('keeps every entry through growth far past its first capacity', () => {
    const seen = createSeenTable<InFlight>();
    for (let i = 0; i < 20_000; i++) seen.add(`d-${i}`, key(`body ${i}`), i + 1);
    expect(seen.size).toBe(20_000);
    for (let i = 0; i < 20_000; i += 7) {
      expect(seen.byId(`d-${i}`)).toBe(i + 1);
      expect(seen.byBody(key(`body ${i}`))).toBe(i + 1);
    }
    expect(seen.byId('d-20000')).toBeUndefined();
  });

  it('holds a sliding window of deliveries in its first capacity, however many pass through it', () => {
    // A receiver's steady state: every prune leaves a freed slot behind until the tables start clean.
    const seen = createSeenTable<InFlight>({ hashId: (id) => hashDeliveryId(id) & 255 });
    for (let i = 1; i <= 20_000; i++) {
      seen.add(`d-${i}`, key(`body ${i}`), i);
      seen.prune(i - 500);
      if (i % 997 === 0) {
        expect(seen.size).toBe(500);
        expect(seen.byId(`d-${i - 499}`)).toBe(i - 499);
        expect(seen.byBody(key(`body ${i - 250}`))).toBe(i - 250);
        expect(seen.byId(`d-${i - 500}`)).toBeUndefined();
        expect(seen.byBody(key(`body ${i - 500}`))).toBeUndefined();
      }
    }
  });

  it('tells keys apart by their whole text when every delivery id hashes alike and bodies share their first bytes', () => {
    const seen = createSeenTable<InFlight>({ hashId: () => 7 });
    const body = (i: number): string => `same${String(i).padStart(28, '0')}`;
    for (let i = 0; i < 300; i++) seen.add(`d-${i}`, body(i), i + 1);
    for (let i = 0; i < 300; i++) {
      expect(seen.byId(`d-${i}`)).toBe(i + 1);
      expect(seen.byBody(body(i))).toBe(i + 1);
    }
    expect(seen.byId('d-300')).toBeUndefined();
    expect(seen.byBody(body(300))).toBeUndefined();
  });

  it('forgets a removed delivery, finds the ones whose probe passed it, and takes it again', () => {
    const seen = createSeenTable<InFlight>({ hashId: () => 3 });
    const positions = ['x', 'y', 'z'].map((n, i) => seen.add(`d-${n}`, key(n), i + 1));
    seen.remove(positions[1]!);
    seen.remove(positions[1]!);
    expect(seen.byId('d-y')).toBeUndefined();
    expect(seen.byBody(key('y'))).toBeUndefined();
    expect(seen.byId('d-z')).toBe(3);
    expect(seen.size).toBe(2);
    seen.add('d-y', key('y'), 4);
    expect(seen.byId('d-y')).toBe(4);
  });

  it('prunes durable entries up to a seq in order, stopping at an append in flight', () => {
    const seen = createSeenTable<InFlight>();
    seen.add('d-1', key('1'), 1);
    const removed = seen.add('d-2', key('2'), 2);
    seen.add('d-3', key('3'), 3);
    const flying = { name: '4' };
    seen.add('d-4', key('4'), flying);
    seen.add('d-5', key('5'), 5);
    seen.remove(removed);
    seen.prune(10);
    expect([1, 2, 3].map((i) => seen.byId(`d-${i}`))).toEqual([undefined, undefined, undefined]);
    expect(seen.byId('d-4')).toBe(flying);
    expect(seen.byId('d-5')).toBe(5);
    expect(seen.size).toBe(2);
  });

  it('points a key held twice (a spool written before bodies were deduplicated) to its newest entry', () => {
    const seen = createSeenTable<InFlight>();
    seen.add('d-a', key('x'), 1);
    seen.add('d-b', key('x'), 2);
    seen.add('d-a', key('y'), 3);
    expect(seen.byBody(key('x'))).toBe(2);
    expect(seen.byId('d-a')).toBe(3);
    seen.prune(2);
    expect(seen.byId('d-a')).toBe(3);
    expect(seen.byBody(key('x'))).toBeUndefined();
    expect(seen.byId('d-b')).toBeUndefined();
    expect(seen.byBody(key('y'))).toBe(3);
  });

  for (const [name, hashId] of [
    ['FNV ids', hashDeliveryId],
    ['ids in 16 hashes', (id: string) => hashDeliveryId(id) & 15],
  ] as const) {
    it(`answers as two maps would over 60,000 random adds, removals, durable marks and prunes (${name})`, () => {
      // Seeded, so a failure can be replayed.
      const random = createRng(name.length);
      const seen = createSeenTable<InFlight>({ hashId });
      const ids = new Map<string, number>();
      const bodies = new Map<string, number>();
      const entries: { id: string; body: string; state: number | InFlight; pos: number; gone: boolean }[] = [];
      let seq = 0;
      let pruned = 0;
      const drop = (e: (typeof entries)[number]): void => {
        if (ids.get(e.id) === e.pos) ids.delete(e.id);
        if (bodies.get(e.body) === e.pos) bodies.delete(e.body);
        e.gone = true;
      };
      for (let step = 0; step < 60_000; step++) {
        const r = random();
        if (r < 0.55) {
          // Ids and bodies from small pools, so keys are held twice and come back after removal.
          const id = `d-${Math.floor(random() * 5_000)}`;
          const body = key(String(Math.floor(random() * 5_000)));
          const state = random() < 0.3 ? { name: id } : ++seq;
          const pos = seen.add(id, body, state);
          entries.push({ id, body, state, pos, gone: false });
          ids.set(id, pos);
          bodies.set(body, pos);
        } else if (r < 0.7 && entries.length > pruned) {
          const e = entries[pruned + Math.floor(random() * (entries.length - pruned))]!;
          seen.remove(e.pos);
          if (!e.gone) drop(e);
        } else if (r < 0.85 && entries.length > pruned) {
          const e = entries[pruned + Math.floor(random() * (entries.length - pruned))]!;
          if (!e.gone && typeof e.state !== 'number') {
            e.state = ++seq;
            seen.set(e.pos, e.state);
          }
        } else if (r < 0.87) {
          const upTo = seq - Math.floor(random() * 200);
          seen.prune(upTo);
          while (pruned < entries.length) {
            const e = entries[pruned]!;
            if (!e.gone && (typeof e.state !== 'number' || e.state > upTo)) break;
            if (!e.gone) drop(e);
            pruned++;
          }
        } else {
          const id = `d-${Math.floor(random() * 5_000)}`;
          const body = key(String(Math.floor(random() * 5_000)));
          const byId = ids.get(id);
          const byBody = bodies.get(body);
          expect(seen.byId(id)).toBe(byId === undefined ? undefined : entries[byId]!.state);
          expect(seen.byBody(body)).toBe(byBody === undefined ? undefined : entries[byBody]!.state);
        }
      }
      expect(seen.size).toBe(entries.filter((e) => !e.gone).length);
    });
  }
});
