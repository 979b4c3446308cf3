/** The named benchmarks `npm run bench` knows; each script records its own bench/results/<name>.json. */
export interface BenchmarkEntry {
  name: string;
  file: string;
  args: string[];
  what: string;
}

export const BENCHMARKS: readonly BenchmarkEntry[] = [
  { name: 'simulator', file: 'simulator.ts', args: [], what: 'simulator contact pages/s at per_page 100 and 1000 over 1M contacts, memory' },
  { name: 'client', file: 'client.ts', args: [], what: 'client pages/s as a ratio to a bare undici loop' },
  { name: 'client-rate', file: 'client-rate.ts', args: [], what: 'adaptive rate control against an undisclosed 20 req/s limit' },
  { name: 'warehouse', file: 'warehouse.ts', args: [], what: 'load and 1%-changed merge of 1M contacts, ratio to DuckDB read_json, peak memory' },
  {
    name: 'warehouse-floor',
    file: 'warehouse-floor.ts',
    args: [],
    what: "the sync's contact loads and lake publish against a minimal DuckDB pipeline over the same pages; commits per load against per row group",
  },
  { name: 'writer-row-groups', file: 'writer-row-groups.ts', args: [], what: "warehouse writer's row group size against its peak memory and load time (ratio to DuckDB's default)" },
  { name: 'duckdb-writer-memory', file: 'duckdb-writer-memory.ts', args: [], what: "DuckDB's own working memory writing 1M contacts through the warehouse writer, by thread count and memory limit" },
  { name: 'webhooks', file: 'webhooks.ts', args: [], what: 'durable accepted events/s, p50/p99, ratio to an HMAC-only node:http server' },
  { name: 'webhooks-checks', file: 'webhooks-checks.ts', args: [], what: 'CPU per delivery of the receiver body checks (issue 17), ratio to the checks before them' },
  { name: 'webhooks-apply', file: 'webhooks-apply.ts', args: [], what: 'webhook events applied to the warehouse per second' },
  { name: 'push', file: 'push.ts', args: [], what: 'push requests/s and 429 share at allowed rates of 10, 50 and 200 req/s' },
  { name: 'cli-latency', file: 'cli-latency.ts', args: [], what: 'wall time of a no-change sync, status and schedule list on the embedded default, as ratios to `crmsync --help`' },
  { name: 'report-snapshots', file: 'report-snapshots.ts', args: [], what: "one report run's snapshots written in one transaction, as a ratio to a transaction per snapshot" },
  { name: 'report', file: 'report.ts', args: ['100000'], what: 'crmsync report at 100k contacts: seconds, ratio to a one-count crmsync query, file size' },
  { name: 'freshness', file: 'freshness.ts', args: ['100000'], what: 'no-change and 1%-edited incremental runs against a full reconcile at 100k contacts: requests and seconds' },
  { name: 'catalog-query', file: 'catalog-query.ts', args: ['50000', '20'], what: 'a query on the lake catalog during a long sync, as a ratio to the same query with no sync running' },
  { name: 'backfill', file: 'backfill.ts', args: ['100000', '1000000'], what: 'backfill rows/s, requests, memory, ratio to a raw fetch floor, dlt comparison' },
];

export function findBenchmarks(names: readonly string[]): BenchmarkEntry[] {
  if (names.length === 0) return [...BENCHMARKS];
  const unknown = names.filter((n) => !BENCHMARKS.some((b) => b.name === n));
  if (unknown.length > 0) {
    throw new Error(`Unknown benchmark ${unknown.join(', ')}; choose from ${BENCHMARKS.map((b) => b.name).join(', ')}.`);
  }
  return BENCHMARKS.filter((b) => names.includes(b.name));
}
