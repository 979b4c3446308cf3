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
