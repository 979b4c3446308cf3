import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { defineConfig } from 'vitest/config';

// `npm run test:fast`: the tests that need no Temporal server, no workflow bundle and no spawned
// CLI, and not the bounded load tests below, for a quick loop while editing. A test file is left out when it, or a local module it
// imports (followed transitively), uses one of those; `npm test` still runs everything.
const NEEDS_SERVER = /helpers\/temporal|run-cli|withTemporal|TestWorkflowEnvironment|inject\(|startDevServer|runSync|bundleWorkflows|@temporalio\/(worker|testing)/;

function listTs(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? listTs(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

const verdicts = new Map<string, boolean>();
function needsServer(file: string, seen = new Set<string>()): boolean {
  const known = verdicts.get(file);
  if (known !== undefined) return known;
  if (seen.has(file)) return false;
  seen.add(file);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return false;
  }
  const local = [...text.matchAll(/from\s+'(\.{1,2}\/[^']+)'/g)].map((m) => resolve(dirname(file), m[1]!.replace(/\.js$/, '.ts')));
  const verdict = NEEDS_SERVER.test(text) || local.some((f) => needsServer(f, seen));
  verdicts.set(file, verdict);
  return verdict;
}

// Bounded load, fault and storm tests: no server of Temporal's, but many seconds of traffic each.
const LOAD_TESTS = new Set(['test/crm/rate-limiter-sparse.test.ts', 'test/warehouse/concurrency.test.ts', 'test/webhooks/poison-fuzz.test.ts', 'test/webhooks/e2e.test.ts']);

// Child processes that build, install or run the CLI, or crash a receiver: seconds of process
// start-up each, so they run with the full suite only (`npm test`), as the Temporal tests do.
const SPAWNING_TESTS = new Set([
  'test/cli/build-stamp.test.ts',
  'test/cli/install-cli.test.ts',
  'test/simulator/cli.test.ts',
  'test/webhooks/register.test.ts',
  'test/webhooks/crash-recovery.test.ts',
]);

const root = dirname(new URL(import.meta.url).pathname);
const fast = listTs(join(root, 'test'))
  .filter((f) => f.endsWith('.test.ts') && !needsServer(f))
  .map((f) => relative(root, f))
  .filter((f) => !LOAD_TESTS.has(f) && !SPAWNING_TESTS.has(f));

export default defineConfig({
  test: {
    pool: 'forks',
    include: fast,
    testTimeout: 30_000,
    fileParallelism: true,
    maxWorkers: 2,
    // Each worker imports DuckDB, undici and the sources once, not once per file: most of this
    // set's time was imports. The fast tests keep no module state between files (no module mocks;
    // timers faked in a file are restored there); `npm test` still isolates every file.
    isolate: false,
  },
});
