import { bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';

/**
 * Bundles workflow code for the sandbox. `extensionAlias` lets `.js` import suffixes (NodeNext
 * style) resolve to `.ts` sources, so the same files bundle from source and from dist/.
 */
export async function bundleWorkflows(workflowsPath: string): Promise<WorkflowBundleWithSourceMap> {
  return await bundleWorkflowCode({
    workflowsPath,
    logger: quietLogger(),
    webpackConfigHook: (config) => ({
      ...config,
      resolve: { ...config.resolve, extensionAlias: { '.js': ['.ts', '.js'] } },
    }),
  });
}

// The bundler logs every module at info level; keep warnings and errors only.
function quietLogger() {
  const drop = (): void => undefined;
  const warn = (message: string, meta?: Record<string, unknown>): void => {
    process.stderr.write(`[bundle] ${message}${meta ? ` ${JSON.stringify(meta)}` : ''}\n`);
  };
  return { trace: drop, debug: drop, info: drop, log: drop, warn, error: warn };
}
