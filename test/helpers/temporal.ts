import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { inject } from 'vitest';
import { runWorkers } from '../../src/temporal/worker.js';

/** Address of the run's shared Temporal dev server (started by test/setup/global-setup.ts). */
export function testTemporalAddress(): string {
  const address = inject('temporalAddress');
  if (!address) throw new Error(`The test Temporal dev server did not start in global setup:\n${inject('temporalError') ?? '(no message)'}`);
  return address;
}

/** Path of workflows/index.ts bundled once for the run; throws the bundler's error if it failed. */
export function testWorkflowBundlePath(): string {
  const path = inject('workflowBundlePath');
  if (!path) throw new Error(`Bundling workflows/index.ts failed in global setup:\n${inject('workflowBundleError') ?? '(no message)'}`);
  return path;
}

/** The test-only workflows (helloWorkflow, helloWarehouseWorkflow), bundled once for the run. */
export function testFixtureWorkflowBundlePath(): string {
  const path = inject('fixtureWorkflowBundlePath');
  if (!path) throw new Error(`Bundling test/fixtures/workflows failed in global setup:\n${inject('fixtureWorkflowBundleError') ?? '(no message)'}`);
  return path;
}

export interface TestWorkerOptions {
  /** Activities for the main task queue. */
  activities?: object;
  /** When given, a second worker serves these on `${taskQueue}-warehouse`. */
  warehouseActivities?: object;
  /** Defaults to a unique queue per call, so tests running in parallel never steal tasks. */
  taskQueue?: string;
  /** Defaults to the production bundle (workflows/index.ts). */
  workflowBundlePath?: string;
}

export interface TestWorkerContext {
  client: Client;
  taskQueue: string;
  warehouseTaskQueue: string;
  address: string;
  namespace: string;
}

/**
 * Runs `fn` while a real worker (prebuilt bundle, given activities) polls a fresh task queue on
 * the shared dev server; shuts the worker down and closes connections afterwards, even on error.
 */
export async function withTestWorker<T>(options: TestWorkerOptions, fn: (ctx: TestWorkerContext) => Promise<T>): Promise<T> {
  quietTemporalRuntime();
  const address = testTemporalAddress();
  const namespace = inject('temporalNamespace');
  const codePath = options.workflowBundlePath ?? testWorkflowBundlePath();
  const taskQueue = options.taskQueue ?? `test-${randomUUID()}`;
  const warehouseTaskQueue = `${taskQueue}-warehouse`;
  const nativeConnection = await NativeConnection.connect({ address });
  try {
    const connection = await Connection.connect({ address });
    try {
      const client = new Client({ connection, namespace });
      const workers = [
        await Worker.create({
          connection: nativeConnection,
          namespace,
          taskQueue,
          workflowBundle: { codePath },
          activities: options.activities ?? {},
        }),
      ];
      if (options.warehouseActivities) {
        workers.push(
          await Worker.create({
            connection: nativeConnection,
            namespace,
            taskQueue: warehouseTaskQueue,
            activities: options.warehouseActivities,
            maxConcurrentActivityTaskExecutions: 1,
          }),
        );
      }
      const body = fn({ client, taskQueue, warehouseTaskQueue, address, namespace });
      return await runAllUntil(workers, body);
    } finally {
      await connection.close();
    }
  } finally {
    await nativeConnection.close();
  }
}

/**
 * Runs `fn` while the production workers (`runWorkers`: the production bundle on a fresh queue,
 * no main-queue activities, `warehouseActivities` on its warehouse queue with that concurrency)
 * poll the shared dev server; stops them and closes connections afterwards, even on error.
 */
export async function withProductionWorkers<T>(options: { warehouseActivities: object; warehouseConcurrency: number }, fn: (ctx: TestWorkerContext) => Promise<T>): Promise<T> {
  quietTemporalRuntime();
  const address = testTemporalAddress();
  const namespace = inject('temporalNamespace');
  const taskQueue = `t-${randomUUID().slice(0, 12)}`;
  const warehouseTaskQueue = `${taskQueue}-warehouse`;
  const native = await NativeConnection.connect({ address });
  const connection = await Connection.connect({ address });
  const abort = new AbortController();
  const workers = runWorkers({
    nativeConnection: native,
    namespace,
    taskQueues: { main: taskQueue, warehouse: warehouseTaskQueue },
    activities: {},
    warehouseActivities: options.warehouseActivities,
    warehouseConcurrency: options.warehouseConcurrency,
    workflowBundle: { codePath: testWorkflowBundlePath() },
    signal: abort.signal,
  });
  try {
    return await fn({ client: new Client({ connection, namespace }), taskQueue, warehouseTaskQueue, address, namespace });
  } finally {
    abort.abort();
    await workers;
    await connection.close();
    await native.close();
  }
}

async function runAllUntil<T>(workers: Worker[], body: Promise<T>): Promise<T> {
  const [first, ...rest] = workers;
  if (!first) return await body;
  if (rest.length === 0) return await first.runUntil(body);
  return await first.runUntil(runAllUntil(rest, body));
}

/**
 * Worker state changes at INFO drown test output; keep warnings. Call before the first
 * NativeConnection or Worker of a test file (withTestWorker does).
 */
export function quietTemporalRuntime(): void {
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Already installed in this process (an earlier test or the test itself): keep that one.
  }
}
