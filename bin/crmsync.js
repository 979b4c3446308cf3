#!/usr/bin/env node
// Runs the compiled CLI (npm run build). In development and tests: node --import tsx src/cli/entry.ts
import '../dist/src/cli/entry.js';
