// A crmsync worker in its own process, for the crash test: the real activities built from
// configuration (environment) over the file's owner, served on the test's task queues until the
// process is killed.
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../../../activities/index.js';
import { loadConfig } from '../../../src/config.js';
import { crmClientFromConfig } from '../../../src/crm/index.js';
import { silentLogger } from '../../../src/logger.js';
import { openOwnerFromConfig } from '../../../src/worker/open-owner-from-config.js';

const config = loadConfig(process.env);
const taskQueue = process.env.PUSH_CHILD_TASK_QUEUE!;
const connection = await NativeConnection.connect({ address: process.env.PUSH_CHILD_TEMPORAL_ADDRESS! });
const namespace = process.env.PUSH_CHILD_NAMESPACE ?? 'default';
const owner = await openOwnerFromConfig(config);
const activities = createActivities({ config, logger: silentLogger, crm: crmClientFromConfig(config), owner });
const workers = [
  await Worker.create({ connection, namespace, taskQueue, workflowBundle: { codePath: process.env.PUSH_CHILD_BUNDLE! } }),
  await Worker.create({
    connection,
    namespace,
    taskQueue: `${taskQueue}-warehouse`,
    activities: activities.warehouse,
    maxConcurrentActivityTaskExecutions: 1,
  }),
];
process.stdout.write('ready\n');
await Promise.all(workers.map((w) => w.run()));
