#!/usr/bin/env node
// Runs the compiled CLI (npm run build). During development: npx tsx src/cli/index.ts
import { main } from '../dist/src/cli/main.js';

await main();
