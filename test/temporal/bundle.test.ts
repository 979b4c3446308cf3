import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bundleWorkflows, bundleWorkflowsInChild, WorkflowBundleError } from '../../src/temporal/bundle-workflows.js';

/** The source modules of a bundle, by the ids webpack gives them (`./workflows/sync-workflow.ts`). */
function sourceModules(code: string): string[] {
  return [...new Set([...code.matchAll(/"(\.\/[^"]+\.ts)"/g)].map((m) => m[1]!))].sort();
}

describe('workflow bundle', () => {
  it('bundles what `crmsync worker` loads: every production workflow, from workflows/ only', async () => {
    const bundle = await bundleWorkflows(resolve('workflows/index.ts'));
    const workflows = Object.entries(await import('../../workflows/index.js'))
      .filter(([, value]) => typeof value === 'function')
      .map(([name]) => name);
    expect(workflows).toEqual(expect.arrayContaining(['syncWorkflow', 'syncStreamWorkflow', 'pushWorkflow']));
    for (const name of workflows) {
      expect(name).toMatch(/Workflow$/);
      expect(bundle.code).toContain(name);
    }
    const modules = sourceModules(bundle.code);
    // page-ranges.ts is reached only through `./page-ranges.js` imports: `.js` suffixes resolve to `.ts` sources.
    expect(modules).toContain('./workflows/page-ranges.ts');
    expect(modules.filter((m) => !m.startsWith('./workflows/'))).toEqual([]);
    // The harness's test workflows live in test/fixtures/workflows and stay out of production.
    expect(bundle.code).not.toMatch(/helloWorkflow|helloWarehouseWorkflow|formatGreeting/);
  });

  it('bundles the test-only workflows apart, with their local imports', async () => {
    const bundle = await bundleWorkflows(resolve('test/fixtures/workflows/hello-workflow.ts'));
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
    expect(bundle.code).toContain('syncWorkflow');
    expect(sourceModules(bundle.code)).toContain('./workflows/page-ranges.ts');
    const failure = bundleWorkflowsInChild(resolve('test/fixtures/lint/workflows/bad.ts'));
    await expect(failure).rejects.toBeInstanceOf(WorkflowBundleError);
    await expect(failure).rejects.toThrow(/\bfs\b/);
  });
});
