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
    /** host:port of the one Temporal dev server of this run. */
    temporalAddress: string;
    temporalNamespace: string;
    /** workflows/index.ts bundled once; undefined when bundling failed (see workflowBundleError). */
    workflowBundlePath: string | undefined;
    workflowBundleError: string | undefined;
  }
}

let server: DevServer | undefined;
let scratch: string | undefined;

/**
 * One Temporal dev server and one workflow bundle for the whole run. A broken bundle does not
 * stop tests that do not need Temporal: it is reported by withTestWorker instead.
 */
export async function setup(project: TestProject): Promise<void> {
  const started = Date.now();
  const config = loadConfig({ ...process.env });
  const cli = locateTemporalCliFromConfig(config);
  scratch = await mkdtemp(join(tmpdir(), 'crmsync-test-'));
  const bundlePath = join(scratch, 'workflow-bundle.js');
  const [dev, bundle] = await Promise.all([
    startDevServer({ cliPath: cli.path, namespace: 'default', readyTimeoutMs: 90_000 }),
    bundleWorkflows(resolve('workflows/index.ts')).then(
      async (b) => {
        await writeFile(bundlePath, b.code);
        return { path: bundlePath, error: undefined };
      },
      (err: unknown) => ({ path: undefined, error: err instanceof Error ? err.message : String(err) }),
    ),
  ]);
  server = dev;
  project.provide('temporalAddress', dev.address);
  project.provide('temporalNamespace', dev.namespace);
  project.provide('workflowBundlePath', bundle.path);
  project.provide('workflowBundleError', bundle.error);
  process.stderr.write(`[global-setup] Temporal dev server ${dev.address} and workflow bundle ready in ${Date.now() - started} ms\n`);
}

export async function teardown(): Promise<void> {
  await server?.stop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
}
