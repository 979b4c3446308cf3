import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { TestProject } from 'vitest/node';
import { loadConfig } from '../../src/config.js';
import { bundleWorkflows } from '../../src/temporal/bundle-workflows.js';
import { startDevServer, type DevServer } from '../../src/temporal/dev-server.js';
import { locateTemporalCliFromConfig } from '../../src/temporal/locate-cli.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** host:port of the one Temporal dev server of this run; undefined when it failed (see temporalError). */
    temporalAddress: string | undefined;
    temporalError: string | undefined;
    temporalNamespace: string;
    /** workflows/index.ts bundled once; undefined when bundling failed (see workflowBundleError). */
    workflowBundlePath: string | undefined;
    workflowBundleError: string | undefined;
    /** The test-only workflows (test/fixtures/workflows/hello-workflow.ts) bundled apart from production's. */
    fixtureWorkflowBundlePath: string | undefined;
    fixtureWorkflowBundleError: string | undefined;
  }
}

let server: DevServer | undefined;
let scratch: string | undefined;

/**
 * One Temporal dev server and one workflow bundle for the whole run. A missing Temporal CLI or a
 * broken bundle does not stop tests that do not need them: the Temporal helpers report it.
 */
export async function setup(project: TestProject): Promise<void> {
  const started = Date.now();
  scratch = await mkdtemp(join(tmpdir(), 'crmsync-test-'));
  const dir = scratch;
  const [dev, bundle, fixtureBundle] = await Promise.all([
    startServer(),
    bundleTo(resolve('workflows/index.ts'), join(dir, 'workflow-bundle.js')),
    bundleTo(resolve('test/fixtures/workflows/hello-workflow.ts'), join(dir, 'fixture-workflow-bundle.js')),
  ]);
  server = dev.server;
  project.provide('temporalAddress', dev.server?.address);
  project.provide('temporalError', dev.error);
  project.provide('temporalNamespace', dev.server?.namespace ?? 'default');
  project.provide('workflowBundlePath', bundle.path);
  project.provide('workflowBundleError', bundle.error);
  project.provide('fixtureWorkflowBundlePath', fixtureBundle.path);
  project.provide('fixtureWorkflowBundleError', fixtureBundle.error);
  const status = [
    dev.server ? `Temporal dev server ${dev.server.address}` : 'Temporal FAILED',
    bundle.path ? 'workflow bundle' : 'bundle FAILED',
    fixtureBundle.path ? 'fixture bundle' : 'fixture bundle FAILED',
  ];
  process.stderr.write(`[global-setup] ${status.join(', ')} (${Date.now() - started} ms)\n`);
}

async function bundleTo(entry: string, out: string): Promise<{ path: string | undefined; error: string | undefined }> {
  try {
    await writeFile(out, (await bundleWorkflows(entry)).code);
    return { path: out, error: undefined };
  } catch (err) {
    return { path: undefined, error: err instanceof Error ? err.message : String(err) };
  }
}

async function startServer(): Promise<{ server: DevServer | undefined; error: string | undefined }> {
  try {
    const cli = locateTemporalCliFromConfig(loadConfig({ ...process.env }));
    return { server: await startDevServer({ cliPath: cli.path, namespace: 'default', readyTimeoutMs: 90_000 }), error: undefined };
  } catch (err) {
    return { server: undefined, error: err instanceof Error ? err.message : String(err) };
  }
}

export async function teardown(): Promise<void> {
  await server?.stop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
}
