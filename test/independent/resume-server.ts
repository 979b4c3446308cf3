// The independent CRM of spec-server.ts, made slower and observable for crash and resume tests:
// each request can be held back before it is answered, every request is logged with the time it
// arrived and was answered, and contacts can be edited, deleted and added between pages the way
// a CRM's users change them while a sync runs (an edit moves `updated_at` to the CRM's clock).
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { SpecServer, seedContact, wall, type SpecContact } from './spec-server.js';

export interface TimedRequest {
  /** Order of arrival. */
  seq: number;
  path: string;
  query: Record<string, string | string[]>;
  /** Date.now() at arrival and when the answer was written (0 while unanswered). */
  at: number;
  done: number;
  status: number;
}

/** A contact listing page request: its page, page size and order as asked. */
export interface PageAsk {
  page: number;
  perPage: number;
  order: string;
  orderBy: string;
  filtered: boolean;
}

export class ResumeServer extends SpecServer {
  readonly timed: TimedRequest[] = [];
  /** How long to hold each request before answering it (ms); per request. */
  delay: (r: { path: string; query: URLSearchParams }) => number = () => 0;
  private seq = 0;
  /** A clock for `updated_at` of edits that is always after every seeded time. */
  private editClock = Date.UTC(2026, 5, 1, 12, 0, 0);

  constructor(ids: number[]) {
    super(ids);
    // SpecServer answers synchronously; put a delay and a timed log in front of its handler.
    const self = this as unknown as { server: Server; handle: (req: IncomingMessage, res: ServerResponse) => void };
    const handle = self.handle.bind(this);
    self.server.removeAllListeners('request');
    self.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const query: Record<string, string | string[]> = {};
      for (const [k, v] of url.searchParams) {
        if (k.endsWith('[]')) ((query[k] ??= []) as string[]).push(v);
        else query[k] = v;
      }
      const entry: TimedRequest = { seq: this.seq++, path: url.pathname, query, at: Date.now(), done: 0, status: 0 };
      this.timed.push(entry);
      const wait = this.delay({ path: url.pathname, query: url.searchParams });
      const go = (): void => {
        if (req.destroyed || res.destroyed) return;
        res.on('finish', () => {
          entry.done = Date.now();
          entry.status = res.statusCode;
        });
        handle(req, res);
      };
      if (wait > 0) setTimeout(go, wait);
      else go();
    });
  }

  /** Contact listing page requests (GET /subscribers) with their page, size and order. */
  pageAsks(from = 0): (TimedRequest & PageAsk)[] {
    return this.timed
      .filter((r) => r.seq >= from && r.path === '/v2/subscribers')
      .map((r) => ({
        ...r,
        page: Number(r.query.page ?? 1),
        perPage: Number(r.query.per_page ?? 10),
        order: String(r.query.order_type ?? r.query.sort_type ?? 'DESC').toUpperCase(),
        orderBy: String(r.query.order_by ?? r.query.sort_by ?? 'id'),
        filtered: Object.keys(r.query).some((k) => k.endsWith('[]') || k === 'search'),
      }));
  }

  nextSeq(): number {
    return this.seq;
  }

  /** An edit made in the CRM: new field values, tags and custom values, and `updated_at` now. */
  edit(id: number, n: number): SpecContact {
    const c = this.contacts.get(id);
    if (!c) throw new Error(`no contact ${id}`);
    this.editClock += 61_000;
    c.first_name = `Edited${n}`;
    c.city = `City ${n}`;
    c.status = c.status === 'subscribed' ? 'unsubscribed' : 'subscribed';
    c.tagIds = c.tagIds.includes(4) ? c.tagIds.filter((t) => t !== 4) : [...c.tagIds, 4].sort((a, b) => a - b);
    c.listIds = c.listIds.includes(3) ? c.listIds.filter((l) => l !== 3) : [...c.listIds, 3].sort((a, b) => a - b);
    c.custom = { ...c.custom, nickname: `edited ${n}` };
    c.updated_at = wall(new Date(this.editClock));
    return c;
  }

  /** A contact created in the CRM now (a seeded contact with `created_at`/`updated_at` now). */
  add(id: number): SpecContact {
    if (this.contacts.has(id)) throw new Error(`contact ${id} exists`);
    this.editClock += 61_000;
    const c = { ...seedContact(id), created_at: wall(new Date(this.editClock)), updated_at: wall(new Date(this.editClock)) };
    this.contacts.set(id, c);
    return c;
  }

  remove(id: number): void {
    if (!this.contacts.delete(id)) throw new Error(`no contact ${id}`);
  }
}
