// The ceiling of a contact load on this machine: the pieces a load cannot avoid, timed alone in
// one process. JSON.stringify of raw (JS, one thread), a pure appender of the final typed columns
// + raw into an empty table (no fingerprint, no merge, no history), and DuckDB copying those rows
// table to table (its own write cost). Usage: node --import tsx bench/warehouse-ceiling.ts [N]
// (default 1,000,000); figures to stdout and bench/results/warehouse-ceiling.json.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BIGINT,
  DATE,
  DOUBLE,
  DuckDBDataChunk,
  DuckDBInstance,
  DuckDBListType,
  TIMESTAMPTZ,
  VARCHAR,
  listValue,
  timestampTZValue,
  dateValue,
  type DuckDBType,
  type DuckDBValue,
} from '@duckdb/node-api';
import { CONTACT_COLUMNS } from '../src/warehouse/contact-columns.js';
import { benchContact } from './warehouse-contacts.js';

const N = Number(process.argv[2] ?? 1_000_000);
const dir = mkdtempSync(join(tmpdir(), 'crmsync-ceiling-'));
const ms = (t: number) => Math.round(performance.now() - t);
const figures: Record<string, { ms: number; cpuMs?: number }> = {};
const cpu0 = () => process.cpuUsage();
const cpuMs = (c: NodeJS.CpuUsage) => {
  const u = process.cpuUsage(c);
  return Math.round((u.user + u.system) / 1000);
};

const typeOf = (t: string): DuckDBType =>
  t === 'BIGINT' ? BIGINT : t === 'DOUBLE' ? DOUBLE : t === 'DATE' ? DATE : t === 'TIMESTAMPTZ' ? TIMESTAMPTZ : t === 'BIGINT[]' ? new DuckDBListType(BIGINT) : VARCHAR;

try {
  const cs = Array.from({ length: N }, (_, i) => benchContact(i + 1));
  const inst = await DuckDBInstance.create(join(dir, 'c.duckdb'));
  const c = await inst.connect();
  const ddl = CONTACT_COLUMNS.map(([n, t]) => `${n} ${t}`).join(', ');
  await c.run(`CREATE TABLE ceil (${ddl}, raw JSON); CREATE TABLE copy (${ddl}, raw JSON)`);

  let t = performance.now();
  for (const x of cs) JSON.stringify(x.raw);
  figures.jsonStringifyRaw = { ms: ms(t) };
  console.log(`${ms(t)} ms  JSON.stringify(raw) x${N}`);

  const types = [...CONTACT_COLUMNS.map(([, ty]) => typeOf(ty)), VARCHAR];
  t = performance.now();
  let cpu = cpu0();
  const app = await c.createAppender('ceil');
  let jsMs = 0;
  for (let s = 0; s < N; s += 2048) {
    const t0 = performance.now();
    const part = cs.slice(s, s + 2048);
    const cols: DuckDBValue[][] = CONTACT_COLUMNS.map(([n, ty]) =>
      part.map((x): DuckDBValue => {
        const v = (x as unknown as Record<string, unknown>)[n === 'tag_ids' ? 'tags' : n === 'list_ids' ? 'lists' : n];
        if (v === null || v === undefined) return null;
        if (ty === 'BIGINT') return BigInt(v as number);
        if (ty === 'DOUBLE') return v as number;
        if (ty === 'DATE') return dateValue(Math.floor(Date.parse(v as string) / 86_400_000));
        if (ty === 'TIMESTAMPTZ') return timestampTZValue(BigInt(Date.parse(v as string)) * 1000n);
        if (ty === 'BIGINT[]') return listValue((v as { id: number }[]).map((r) => BigInt(r.id)));
        if (ty === 'JSON') return JSON.stringify(v);
        return v as string;
      }),
    );
    cols.push(part.map((x) => JSON.stringify(x.raw)));
    const chunk = DuckDBDataChunk.create(types, part.length);
    chunk.setColumns(cols);
    jsMs += performance.now() - t0;
    app.appendDataChunk(chunk);
  }
  app.closeSync();
  figures.pureAppender = { ms: ms(t), cpuMs: cpuMs(cpu) };
  console.log(`${ms(t)} ms (cpu ${cpuMs(cpu)} ms; JS building chunks ${Math.round(jsMs)} ms)  pure appender of typed columns + raw into an empty table`);

  t = performance.now();
  cpu = cpu0();
  await c.run('INSERT INTO copy SELECT * FROM ceil');
  figures.duckdbWriteAlone = { ms: ms(t), cpuMs: cpuMs(cpu) };
  console.log(`${ms(t)} ms (cpu ${cpuMs(cpu)} ms)  INSERT INTO copy SELECT * FROM ceil (DuckDB write alone)`);
  t = performance.now();
  cpu = cpu0();
  await c.run('CREATE TEMP TABLE tcopy AS SELECT * FROM ceil');
  console.log(`${ms(t)} ms (cpu ${cpuMs(cpu)} ms)  CREATE TEMP TABLE AS SELECT * FROM ceil`);
  c.closeSync();
  inst.closeSync();
  const perSecond = (f: { ms: number }) => Math.round(N / (f.ms / 1000));
  const results = {
    benchmark: 'warehouse-ceiling',
    at: new Date().toISOString(),
    contacts: N,
    figures,
    rowsPerSecond: {
      jsonStringifyRawOnly: perSecond(figures.jsonStringifyRaw!),
      pureAppenderTypedPlusRaw: perSecond(figures.pureAppender!),
      duckdbWriteAloneTableToTable: perSecond(figures.duckdbWriteAlone!),
    },
    loadAverage: loadavg().map((x) => Math.round(x * 10) / 10),
  };
  console.log(JSON.stringify(results, null, 2));
  mkdirSync(join(import.meta.dirname, 'results'), { recursive: true });
  writeFileSync(join(import.meta.dirname, 'results', 'warehouse-ceiling.json'), JSON.stringify(results, null, 2) + '\n');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
