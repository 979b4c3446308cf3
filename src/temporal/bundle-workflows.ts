import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { CrmsyncError } from '../errors.js';

/** Workflow code does not bundle: usually a Node import somewhere under workflows/. */
export class WorkflowBundleError extends CrmsyncError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('WORKFLOW_BUNDLE_FAILED', message, options);
  }
}

const MAX_DETAIL_CHARS = 4_000;

/**
 * Bundles workflow code for the sandbox. `extensionAlias` lets `.js` import suffixes (NodeNext
 * style) resolve to `.ts` sources, so the same files bundle from source and from dist/. On
 * failure the bundler's own diagnostics go into the error instead of scrolling past on stderr.
 */
export async function bundleWorkflows(workflowsPath: string): Promise<WorkflowBundleWithSourceMap> {
  const diagnostics: string[] = [];
  const keep = (message: string, meta?: Record<string, unknown>): void => {
    diagnostics.push(meta ? `${message} ${JSON.stringify(meta)}` : message);
  };
  const drop = (): void => undefined;
  try {
    return await bundleWorkflowCode({
      workflowsPath,
      logger: { trace: drop, debug: drop, info: drop, log: drop, warn: keep, error: keep },
      webpackConfigHook: (config) => ({
        ...config,
        resolve: { ...config.resolve, extensionAlias: { '.js': ['.ts', '.js'] } },
      }),
    });
  } catch (err) {
    const detail = diagnostics.join('\n').slice(0, MAX_DETAIL_CHARS);
    throw new WorkflowBundleError(
      `Bundling ${workflowsPath} failed; workflows may import values only from @temporalio/workflow (move Node and I/O code to activities/):\n${detail || (err instanceof Error ? err.message : String(err))}`,
      { cause: err },
    );
  }
}

/**
 * `bundleWorkflows` in a child process, returning the code. The bundler (webpack) grows the heap
 * by far more than the worker needs afterwards (bench/results/notes.md, "bundler"), and a
 * long-running worker would otherwise keep it for its whole life; in a child it is returned to
 * the system when the child exits. Same errors as `bundleWorkflows`.
 */
export async function bundleWorkflowsInChild(workflowsPath: string): Promise<{ code: string }> {
  const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  const entry = fileURLToPath(new URL(`./bundle-child.${ext}`, import.meta.url));
  const dir = await mkdtemp(join(tmpdir(), 'crmsync-bundle-'));
  try {
    const out = join(dir, 'workflows.js');
    // From source the child needs tsx too. Its environment carries nothing secret.
    const loader = ext === 'ts' ? ['--import', import.meta.resolve('tsx')] : [];
    const env: NodeJS.ProcessEnv = {};
    for (const k of ['PATH', 'HOME', 'TMPDIR']) if (process.env[k] !== undefined) env[k] = process.env[k];
    const child = spawn(process.execPath, [...loader, entry, workflowsPath, out], { stdio: ['ignore', 'ignore', 'pipe'], env });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      if (stderr.length < MAX_DETAIL_CHARS * 2) stderr += d;
    });
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', resolve);
    });
    if (code !== 0) {
      const last = stderr.trim().split('\n').pop() ?? '';
      let message = last;
      try {
        message = (JSON.parse(last) as { message?: string }).message ?? last;
      } catch {
        // not our JSON line: keep the text
      }
      throw new WorkflowBundleError(message.slice(0, MAX_DETAIL_CHARS) || `the bundler exited with ${String(code)}`);
    }
    return { code: await readFile(out, 'utf8') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
