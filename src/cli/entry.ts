import { applyDuckdbAllocatorDefaults } from '../worker/duckdb-allocator-defaults.js';
import { missingWorkerLaunchSettings } from '../worker/worker-launch-settings.js';

// DuckDB's allocator reads its settings when its library loads, so they are set before any
// command's modules are (main.js imports them).
applyDuckdbAllocatorDefaults();
// `crmsync worker` needs settings node takes only at start: it runs itself again with them
// once, unless it has them already (the user's, or from a launcher: the background spawn, the
// image's environment).
if (process.argv.slice(2).find((a) => !a.startsWith('-')) === 'worker') {
  const { relaunchWorker, watchLauncher } = await import('./relaunch-worker.js');
  const missing = missingWorkerLaunchSettings(process.env, process.execArgv);
  if (missing) await relaunchWorker(missing);
  watchLauncher();
}
const { main } = await import('./main.js');
await main();
