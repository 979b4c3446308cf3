import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createActivities } from '../../activities/index.js';
import { dryRunCommand, parsePushOptions, pushCommand } from '../../src/cli/push.js';
import { loadConfig } from '../../src/config.js';
import { crmClientFromConfig } from '../../src/crm/index.js';
import { silentLogger } from '../../src/logger.js';
import { formatDryRun, formatPushResult } from '../../src/push/format-push.js';
import { startSimulator } from '../../src/simulator/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { openOwnerFromConfig } from '../../src/worker/open-owner-from-config.js';
import { withTestWorker } from '../helpers/temporal.js';
import { testEnv } from '../helpers/test-env.js';

describe('crmsync push options', () => {
  it('names the fix for bad options', () => {
    expect(() => parsePushOptions({})).toThrow(/--from is required/);
    expect(() => parsePushOptions({ from: 'DROP TABLE contacts' })).toThrow(/neither a table\/view name, a .csv, .parquet or .json file, nor a query/);
    expect(() => parsePushOptions({ from: 'SELECT 1; DELETE FROM contacts' })).toThrow(/more than one statement/);
    expect(() => parsePushOptions({ from: 'x', batchSize: '0' })).toThrow(/push:/);
    expect(parsePushOptions({ from: 'marketing.upserts', dryRun: true })).toMatchObject({ from: 'marketing.upserts', dryRun: true, batchSize: 2000, batchSeconds: 10 });
  });
});

describe('crmsync push against the simulator and a real warehouse file', () => {
  it('dry run prints the plan and writes nothing; the push lands and records the ledger', { timeout: 120_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-push-cli-'));
    const sim = await startSimulator({ contacts: 5, seed: 4, mode: 'real' });
    try {
      const taskQueue = `push-cli-${randomUUID()}`;
      const config = loadConfig(testEnv(sim, dir, { CRMSYNC_TASK_QUEUE: taskQueue }));
      await withWarehouse({ dbPath: config.dbPath, lakePath: config.lakePath, write: true }, (w) =>
        w.query(`CREATE TABLE promo AS SELECT *, 'analyst note' AS frist_name FROM (VALUES
          ('cli1@example.test', 'subscribed', 'Ada', 'VIP, Spring Promo'),
          ('cli2@example.test', 'Pending', 'Bob', NULL),
          ('cli3@example.test', 'subscirbed', 'Eve', NULL)) t("Email", "STATUS", first_name, tags)`),
      );

      const opts = parsePushOptions({ from: 'promo', createMissingTags: true });
      const dry = await dryRunCommand(config, { ...opts, dryRun: true });
      const text = formatDryRun(dry);
      expect(text).toContain('new 2  changed 0  retry 0  unchanged 0  invalid 1');
      expect(text).toContain('would create tags: Spring Promo');
      expect(text).toContain('ignored columns (not contact fields): frist_name');
      expect(text).toMatch(/row 3 cli3@example\.test: status: "subscirbed" is not a contact status/);
      expect(sim.truth().tags.some((t) => t.title === 'Spring Promo')).toBe(false);
      expect(sim.stats().byRoute['POST /subscribers'] ?? 0).toBe(0);

      // The worker owns the file while it runs, as `crmsync worker` does.
      const owner = await openOwnerFromConfig(config);
      const crm = crmClientFromConfig(config);
      const result = await withTestWorker({ taskQueue, warehouseActivities: createActivities({ config, logger: silentLogger, crm, owner }).warehouse }, async () => {
        // A source that cannot be read fails the push with the activity's own code and message.
        await expect(pushCommand(config, { ...opts, from: 'no_such_table' }, silentLogger, undefined)).rejects.toMatchObject({
          code: 'PUSH_SOURCE_INVALID',
          message: expect.stringContaining('Cannot read the push source "no_such_table"'),
        });
        return await pushCommand(config, opts, silentLogger, undefined);
      }).finally(async () => {
        await crm.close();
        await owner.close();
      });
      expect(result).toMatchObject({ source: 'promo', toSend: 2, sent: 2, succeeded: 2, failed: 0, counts: { new: 2, invalid: 1 } });
      expect(formatPushResult(result)).toContain('push_dead_letters');
      const truth = sim.truth();
      const contact = truth.contacts.find((c) => c.email === 'cli1@example.test');
      const promo = truth.tags.find((t) => t.title === 'Spring Promo');
      expect(contact?.tags).toContain(Number(promo?.id));
      expect(truth.contacts.find((c) => c.email === 'cli2@example.test')?.status).toBe('pending');
      expect(truth.contacts.some((c) => c.email === 'cli3@example.test')).toBe(false);

      const ledger = await withWarehouse({ dbPath: config.dbPath, lakePath: config.lakePath, write: true }, (w) =>
        w.query(`SELECT push_key, outcome, error_field FROM _push_ledger ORDER BY push_key`),
      );
      const dead = await withWarehouse({ dbPath: config.dbPath, lakePath: config.lakePath, write: true }, (w) => w.query(`SELECT push_key, error_field, error_message FROM push_dead_letters`));
      expect(dead).toEqual([{ push_key: 'cli3@example.test', error_field: 'status', error_message: expect.stringMatching(/^status: "subscirbed"/) }]);
      expect(ledger).toEqual([
        { push_key: 'cli1@example.test', outcome: 'succeeded', error_field: null },
        { push_key: 'cli2@example.test', outcome: 'succeeded', error_field: null },
        { push_key: 'cli3@example.test', outcome: 'rejected', error_field: 'status' },
      ]);
    } finally {
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
