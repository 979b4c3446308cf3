/**
 * Child of bench/catalog-query.ts: a reader in its own process, as an analyst's or `crmsync
 * query`'s is. Each line on stdin is a query (JSON string): it opens the catalog (withCatalog),
 * runs the query through runQuery, and prints `{"ms":..., "openMs":..., "rows":[...]}` (openMs: until
 * the catalog was attached and ready).
 */
import { createInterface } from 'node:readline';
import { runQuery } from '../src/warehouse/run-query.js';
import { withCatalog } from '../src/warehouse/with-catalog.js';

const [catalogPath] = process.argv.slice(2) as [string];
for await (const line of createInterface({ input: process.stdin })) {
  const sql = JSON.parse(line) as string;
  const started = performance.now();
  let opened = 0;
  const result = await withCatalog({ catalogPath }, (r) => {
    opened = performance.now();
    return runQuery(r.connection, sql, 100);
  });
  process.stdout.write(`${JSON.stringify({ ms: performance.now() - started, openMs: opened - started, rows: result.rows })}\n`);
}
