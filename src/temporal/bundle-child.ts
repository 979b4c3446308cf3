/**
 * Child process entry of `bundleWorkflowsInChild`: bundles the workflows at argv[2] and writes the
 * code to the file at argv[3]. A bundling failure is printed as one JSON line on stderr.
 */
import { writeFile } from 'node:fs/promises';
import { bundleWorkflows } from './bundle-workflows.js';

const [workflowsPath, outFile] = process.argv.slice(2);
try {
  if (!workflowsPath || !outFile) throw new Error('usage: bundle-child <workflowsPath> <outFile>');
  const bundle = await bundleWorkflows(workflowsPath);
  await writeFile(outFile, bundle.code);
} catch (err) {
  process.stderr.write(`${JSON.stringify({ message: err instanceof Error ? err.message : String(err) })}\n`);
  process.exitCode = 1;
}
