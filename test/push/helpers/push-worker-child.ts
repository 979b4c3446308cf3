// A crmsync worker in its own process, for the crash test: the real push activities built from
// configuration (environment), served on the test's task queues until the process is killed.
import { NativeConnection, Worker } from '@temporalio/worker';
import { createPushActivitiesFromConfig } from '../../../activities/push-activities-from-config.js';
import { loadConfig } from '../../../src/config.js';
import { silentLogger } from '../../../src/logger.js';

const config = loadConfig(process.env);
const taskQueue = process.env.PUSH_CHILD_TASK_QUEUE!;
const connection = await NativeConnection.connect({ address: process.env.PUSH_CHILD_TEMPORAL_ADDRESS! });
const namespace = process.env.PUSH_CHILD_NAMESPACE ?? 'default';
const workers = [
  await Worker.create({ connection, namespace, taskQueue, workflowBundle: { codePath: process.env.PUSH_CHILD_BUNDLE! } }),
  await Worker.create({
    connection,
    namespace,
    taskQueue: `${taskQueue}-warehouse`,
    activities: createPushActivitiesFromConfig({ config, logger: silentLogger }),
    maxConcurrentActivityTaskExecutions: 1,
  }),
];
process.stdout.write('ready\n');
await Promise.all(workers.map((w) => w.run()));
