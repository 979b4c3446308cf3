import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bundleWorkflows, bundleWorkflowsInChild, WorkflowBundleError } from '../../src/temporal/bundle-workflows.js';

describe('workflow bundle', () => {
  it('bundles workflows/ for the sandbox, resolving .js suffixes to .ts sources', async () => {
    const bundle = await bundleWorkflows(resolve('workflows/index.ts'));
    expect(bundle.code).toContain('helloWorkflow');
    // hello-format.ts is reached only through a `./hello-format.js` import.
    expect(bundle.code).toContain('formatGreeting');
  });

  it('fails on a workflow that imports a Node module, naming it', async () => {
    const failure = bundleWorkflows(resolve('test/fixtures/lint/workflows/bad.ts'));
    await expect(failure).rejects.toBeInstanceOf(WorkflowBundleError);
    await expect(failure).rejects.toThrow(/\bfs\b/);
  });

  it('bundles in a child process (the bundler memory leaves with it), with the same errors', async () => {
    const bundle = await bundleWorkflowsInChild(resolve('workflows/index.ts'));
    expect(bundle.code).toContain('helloWorkflow');
    expect(bundle.code).toContain('formatGreeting');
    const failure = bundleWorkflowsInChild(resolve('test/fixtures/lint/workflows/bad.ts'));
    await expect(failure).rejects.toBeInstanceOf(WorkflowBundleError);
    await expect(failure).rejects.toThrow(/\bfs\b/);
  });
});
