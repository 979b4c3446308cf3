import { applyDuckdbAllocatorDefaults } from '../worker/duckdb-allocator-defaults.js';

// DuckDB's allocator reads its settings when its library loads, so they are set before any
// command's modules are (main.js imports them).
applyDuckdbAllocatorDefaults();
const { main } = await import('./main.js');
await main();
