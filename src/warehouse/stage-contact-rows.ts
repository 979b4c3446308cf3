import { DuckDBDataChunk, INTEGER, VARCHAR, type DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent } from './quote.js';
import { run } from './sql-run.js';
import { CHUNK } from './stage-columns.js';

/** A page whose rows the fetch's scan found: `spans` are each row's start and end in `body`. */
export interface SpannedPage {
  seq: number;
  page: number;
  body: string;
  spans: readonly number[];
}

/**
 * Stages each row of `pages` as `(seq, page, position, raw)` into a fresh temp table, `raw` the
 * row's text as the CRM sent it in a JSON column. The appender does not parse what it puts in a
 * JSON column, so each row is parsed once, by the typing statement's `json_transform`, which
 * fails a malformed row with DuckDB's "Malformed JSON" as a cast would. A row per value rather
 * than a page's rows joined and split in SQL: the split and its cast to JSON parsed every row a
 * second time (figures: bench/results/notes.md, "one parse a row").
 */
export async function stageContactRows(connection: DuckDBConnection, table: string, pages: readonly SpannedPage[]): Promise<void> {
  await run(connection, `CREATE OR REPLACE TEMP TABLE ${quoteIdent(table)} (seq INTEGER, page INTEGER, position INTEGER, raw JSON)`);
  const types = [INTEGER, INTEGER, INTEGER, VARCHAR];
  const appender = await connection.createAppender(table);
  try {
    let cols = fresh();
    const flush = () => {
      if (cols[0].length === 0) return;
      const chunk = DuckDBDataChunk.create(types, cols[0].length);
      chunk.setColumns(cols);
      appender.appendDataChunk(chunk);
      cols = fresh();
    };
    for (const p of pages) {
      for (let k = 0; k < p.spans.length / 2; k++) {
        cols[0].push(p.seq);
        cols[1].push(p.page);
        cols[2].push(k + 1);
        cols[3].push(p.body.slice(p.spans[2 * k], p.spans[2 * k + 1]));
        if (cols[0].length === CHUNK) flush();
      }
    }
    flush();
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
}

function fresh(): [number[], number[], number[], string[]] {
  return [[], [], [], []];
}
