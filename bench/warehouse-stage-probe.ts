// How to get JSON documents from JS into DuckDB fastest: a value per row through the appender,
// newline-joined blobs through the appender (what stageDocs does), or an NDJSON temp file read
// by read_json. Each variant ends with the documents typed by json_transform in a table.
import { DuckDBDataChunk, DuckDBInstance, VARCHAR } from '@duckdb/node-api';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stageDocs, stagedDocsSql } from '../src/warehouse/stage.js';
import { benchContact } from './warehouse-contacts.js';

const N = Number(process.argv[2] ?? 100_000);
const dir = mkdtempSync(join(tmpdir(), 'crmsync-stage-'));
const inst = await DuckDBInstance.create(':memory:');
const c = await inst.connect();
const docs = Array.from({ length: N }, (_, i) => JSON.stringify(benchContact(i + 1)));
const spec = `'{"id":"BIGINT","email":"VARCHAR","created_at":"VARCHAR","raw":"JSON"}'`;

const variants: Record<string, () => Promise<void>> = {
  async perRowAppender() {
    await c.run('CREATE OR REPLACE TEMP TABLE s (doc VARCHAR)');
    const app = await c.createAppender('s');
    for (let i = 0; i < docs.length; i += 2048) {
      const part = docs.slice(i, i + 2048);
      const chunk = DuckDBDataChunk.create([VARCHAR], part.length);
      chunk.setColumns([part]);
      app.appendDataChunk(chunk);
    }
    app.closeSync();
    await c.run(`CREATE OR REPLACE TEMP TABLE t AS SELECT json_transform(doc, ${spec}) AS j FROM s`);
  },
  async joinedBlobs() {
    await stageDocs(c, 's', docs);
    await c.run(`CREATE OR REPLACE TEMP TABLE t AS SELECT json_transform(doc, ${spec}) AS j FROM ${stagedDocsSql('s')}`);
  },
  async ndjsonFile() {
    const f = join(dir, 'docs.ndjson');
    writeFileSync(f, docs.join('\n'));
    await c.run(`CREATE OR REPLACE TEMP TABLE t AS SELECT json_transform(json, ${spec}) AS j FROM read_ndjson_objects('${f}')`);
  },
};

const best: Record<string, number> = {};
try {
  for (let round = 0; round < 3; round++) {
    for (const [name, fn] of Object.entries(variants)) {
      const t = performance.now();
      await fn();
      const ms = performance.now() - t;
      best[name] = Math.min(best[name] ?? Infinity, ms);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const base = best.perRowAppender!;
const results = {
  benchmark: 'warehouse-stage',
  at: new Date().toISOString(),
  documents: N,
  bestOf3Ms: Object.fromEntries(Object.entries(best).map(([k, v]) => [k, Math.round(v)])),
  speedupVsPerRowAppender: Object.fromEntries(Object.entries(best).map(([k, v]) => [k, Math.round((base / v) * 100) / 100])),
};
console.log(JSON.stringify(results, null, 2));
mkdirSync(join(import.meta.dirname, 'results'), { recursive: true });
writeFileSync(join(import.meta.dirname, 'results', 'warehouse-stage.json'), JSON.stringify(results, null, 2) + '\n');
