// The contact load as the sync runs it since issue 19, for bench/warehouse.ts: listing page
// bodies as the CRM sends them, handed to loadContactPages (DuckDB parses the rows and applies the
// tolerant schema), against DuckDB's own reads of the same page bodies into typed columns.
import type { WriteStream } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { scanContactPage } from '../src/crm/scan-contact-page.js';
import { CONTACT_COLUMNS } from '../src/warehouse/contact-columns.js';
import { openWarehouse } from '../src/warehouse/index.js';
import { benchContact } from './warehouse-contacts.js';

export const PAGE_ROWS = 500;

export interface PagesPhase {
  contacts: number;
  contactsPerLoad: number;
  loads: number;
  seconds: number;
  cpuSeconds: number;
  rowsPerSecond: number;
  rejected: number;
}

/** This process's CPU (all threads) since `since`, in ms. */
export const cpuMs = (since: NodeJS.CpuUsage): number => {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1000;
};
/** Milliseconds as seconds, to the millisecond. */
export const secs = (ms: number): number => Math.round(ms) / 1000;

/** The listing page `page` (from 1) of `n` contacts, as GET /subscribers answers it. */
export function pageBody(page: number, n: number): string {
  const first = (page - 1) * PAGE_ROWS + 1;
  const data = Array.from({ length: Math.max(0, Math.min(PAGE_ROWS, n - first + 1)) }, (_, k) => benchContact(first + k).raw);
  return JSON.stringify({ subscribers: { total: n, per_page: PAGE_ROWS, current_page: page, last_page: Math.ceil(n / PAGE_ROWS), data } });
}

/**
 * Loads `n` contacts as page bodies in loads of `perLoad` rows into a fresh warehouse at `dbPath`,
 * timing only `loadContactPages` (the bodies are built and scanned for row spans before, as the
 * fetch's scan does in the sync). Each body is also written to `ndjson` when given (one a line),
 * for the baseline.
 */
export async function loadPages(dbPath: string, lakePath: string, n: number, perLoad: number, ndjson?: WriteStream): Promise<PagesPhase> {
  const w = await openWarehouse({ dbPath, lakePath });
  try {
    await w.migrate();
    const pagesPerLoad = Math.max(1, Math.round(perLoad / PAGE_ROWS));
    const lastPage = Math.ceil(n / PAGE_ROWS);
    let ms = 0;
    let cpu = 0;
    let loads = 0;
    let rejected = 0;
    for (let start = 1; start <= lastPage; start += pagesPerLoad) {
      const pages = [];
      for (let page = start; page < start + pagesPerLoad && page <= lastPage; page++) {
        const body = pageBody(page, n);
        if (ndjson && !ndjson.write(`${body}\n`)) await once(ndjson, 'drain');
        const { rowSpans } = scanContactPage(body, { page, perPage: PAGE_ROWS }, 'GET /subscribers');
        pages.push(rowSpans ? { page, body, rowSpans } : { page, body });
      }
      const t = performance.now();
      const c = process.cpuUsage();
      const s = await w.loadContactPages(pages, { loadId: `pages-${start}`, syncedAt: new Date() });
      ms += performance.now() - t;
      cpu += cpuMs(c);
      loads++;
      rejected += s.rejected;
      process.stderr.write(`pages in loads of ${perLoad}: ${Math.min((start + pagesPerLoad - 1) * PAGE_ROWS, n)}/${n}\r`);
    }
    process.stderr.write('\n');
    const held = (await w.query('SELECT count(*) AS n FROM contacts'))[0]!.n;
    if (Number(held) !== n) throw new Error(`the page loads kept ${String(held)} contacts of ${n}`);
    return { contacts: n, contactsPerLoad: pagesPerLoad * PAGE_ROWS, loads, seconds: secs(ms), cpuSeconds: secs(cpu), rowsPerSecond: Math.round(n / (ms / 1000)), rejected };
  } finally {
    await w.close();
  }
}

/**
 * The typed columns DuckDB's readers give each row: the contact's columns as the CRM names them
 * (tags and lists as JSON, times and the birth date as the CRM writes them); no raw record kept.
 */
const AS_SENT: Record<string, [string, string]> = {
  tag_ids: ['tags', 'JSON'],
  list_ids: ['lists', 'JSON'],
  date_of_birth: ['date_of_birth', 'VARCHAR'],
  created_at: ['created_at', 'TIMESTAMP'],
  updated_at: ['updated_at', 'TIMESTAMP'],
};
const FIELDS: [string, string][] = CONTACT_COLUMNS.map(([name, type]) => AS_SENT[name] ?? [name, type]);
const ROW_STRUCT = `STRUCT(${FIELDS.map(([k, t]) => `${k} ${t}`).join(', ')})`;
const ROW_TRANSFORM = JSON.stringify(Object.fromEntries(FIELDS));

export interface ReadTiming {
  seconds: number;
  cpuSeconds: number;
  rowsPerSecond: number;
}

/**
 * DuckDB's own reads of the page bodies in `ndjson` (one body a line) into a table of typed rows,
 * each into a fresh database file in `dir` with the warehouse's settings (as the page loads):
 * - `readJson`: read_json with the bodies' shape given as typed columns, rows unnested;
 * - `objects`: read_ndjson_objects and json_transform of each body's rows, the fastest of
 *   DuckDB's readers we found for these bodies (read_json parses each 800 KB body more slowly);
 * - `objectsWithRaw`: the same, also keeping each row's JSON text, as the load keeps `raw`.
 */
export async function readPageBodies(dir: string, ndjson: string, n: number): Promise<Record<'readJson' | 'objects' | 'objectsWithRaw', ReadTiming>> {
  const source = `'${ndjson}', maximum_object_size = 268435456`;
  const rows = `SELECT unnest(json_extract(json, '$.subscribers.data[*]')) AS r FROM read_ndjson_objects(${source})`;
  const reads = {
    readJson: `SELECT unnest(p.subscribers.data, recursive := true) FROM read_json(${source}, format = 'newline_delimited', columns = {subscribers: 'STRUCT(total BIGINT, data ${ROW_STRUCT}[])'}) p`,
    objects: `SELECT unnest(json_transform(r, '${ROW_TRANSFORM}')) FROM (${rows})`,
    objectsWithRaw: `SELECT unnest(json_transform(r, '${ROW_TRANSFORM}')), r AS raw FROM (${rows})`,
  };
  const out = {} as Record<keyof typeof reads, ReadTiming>;
  for (const [name, select] of Object.entries(reads) as [keyof typeof reads, string][]) {
    const w = await openWarehouse({ dbPath: join(dir, `${name}.duckdb`), lakePath: join(dir, `${name}-lake`) });
    try {
      const t = performance.now();
      const c = process.cpuUsage();
      await w.connection.run(`CREATE TABLE baseline AS ${select}`);
      const ms = performance.now() - t;
      const cpu = cpuMs(c);
      const got = Number((await w.query('SELECT count(*) AS n FROM baseline'))[0]!.n);
      const columns = Number((await w.query("SELECT count(*) AS n FROM duckdb_columns() WHERE table_name = 'baseline'"))[0]!.n);
      if (got !== n || columns < FIELDS.length) throw new Error(`${name} of the page bodies gave ${got} rows of ${n} and ${columns} columns`);
      out[name] = { seconds: secs(ms), cpuSeconds: secs(cpu), rowsPerSecond: Math.round(n / (ms / 1000)) };
    } finally {
      await w.close();
    }
  }
  return out;
}
