// Every workflow the workers serve. Add one `export *` line per workflow file.
export * from './hello-workflow.js';
