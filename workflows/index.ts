// Every workflow the workers serve. Add one `export *` line per workflow file.
export * from './sync-workflow.js';
export * from './sync-stream-workflow.js';
export * from './push-workflow.js';
export * from './webhook-apply-workflow.js';
export * from './retry-webhook-dead-letters-workflow.js';
