import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config.js';
import { withTemporal } from '../../src/temporal/connect.js';
import { embeddedServerFile, writeEmbeddedServerRecord } from '../../src/temporal/embedded-server-file.js';
import { freePort } from '../../src/temporal/free-port.js';
import { testTemporalAddress } from '../helpers/temporal.js';
import { isProcessAlive } from '../../src/process-alive.js';

async function waitUntilDead(pid: number, timeoutMs = 15_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isProcessAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return !isProcessAlive(pid);
}

describe('withTemporal', () => {
  let dataDir: string;
  let config: Config;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'crmsync-connect-'));
    // These tests check a server that stops with its command; the keep-alive has its own test.
    const env: NodeJS.ProcessEnv = { ...process.env, CRMSYNC_DATA_DIR: dataDir, CRMSYNC_EMBEDDED_IDLE: '0' };
    delete env.TEMPORAL_ADDRESS;
    config = loadConfig(env);
  });
  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('starts an embedded dev server with state under the data dir, and stops it afterwards', async () => {
    const seen = await withTemporal(config, async (t) => {
      const record = JSON.parse(await readFile(embeddedServerFile(dataDir), 'utf8')) as { pid: number; address: string };
      const info = await t.connection.workflowService.getSystemInfo({});
      // A second command on the same data dir joins the running server instead of starting one.
      const joined = await withTemporal(config, async (inner) => inner.address);
      return { embedded: t.embedded, address: t.address, record, serverVersion: info.serverVersion, joined };
    });
    expect(seen.embedded).toBe(true);
    expect(seen.record.address).toBe(seen.address);
    expect(seen.joined).toBe(seen.address);
    expect(seen.serverVersion).toMatch(/\d+\.\d+/);
    expect(existsSync(join(dataDir, 'temporal.sqlite'))).toBe(true);
    expect(await waitUntilDead(seen.record.pid)).toBe(true);
    // Write-ahead log (the file header's format versions, bytes 18 and 19, are 2 in WAL mode):
    // a rollback journal's fsyncs per commit made the server the slowest part of a sync.
    const header = readFileSync(join(dataDir, 'temporal.sqlite')).subarray(18, 20);
    expect([...header]).toEqual([2, 2]);
    expect(existsSync(embeddedServerFile(dataDir))).toBe(false);
  });

  // Issue 16, problem 6: every command paid for starting the embedded server. With an idle time
  // the server outlives the command, the next command joins it, and it stops once unused.
  it('keeps the embedded server for the next command, and stops it once idle', { timeout: 120_000 }, async () => {
    const keep = { ...config, temporal: { ...config.temporal, embeddedIdleMs: 3_000 } };
    const first = await withTemporal(keep, async (t) => ({ address: t.address, pid: (JSON.parse(await readFile(embeddedServerFile(dataDir), 'utf8')) as { pid: number }).pid }));
    expect(isProcessAlive(first.pid)).toBe(true);
    const second = await withTemporal(keep, async (t) => {
      await t.connection.workflowService.getSystemInfo({});
      return t.address;
    });
    expect(second).toBe(first.address);
    expect(await waitUntilDead(first.pid, 90_000)).toBe(true);
    expect(existsSync(embeddedServerFile(dataDir))).toBe(false);
  });

  it('stops the embedded server when the body throws', async () => {
    let pid = -1;
    await expect(
      withTemporal(config, async () => {
        pid = (JSON.parse(await readFile(embeddedServerFile(dataDir), 'utf8')) as { pid: number }).pid;
        throw new Error('body failed');
      }),
    ).rejects.toThrow('body failed');
    expect(pid).toBeGreaterThan(0);
    expect(await waitUntilDead(pid)).toBe(true);
  });

  it('two commands starting together on one data dir share one server', async () => {
    let entered = 0;
    let release!: () => void;
    const bothInside = new Promise<void>((r) => (release = r));
    // A stale lock from a crashed process (pid that cannot exist) must not block the start.
    await writeFile(join(dataDir, 'temporal-dev-server.lock'), '2147483646');
    const body = async (t: { address: string }): Promise<string> => {
      if (++entered === 2) release();
      await bothInside;
      return t.address;
    };
    const [a, b] = await Promise.all([withTemporal(config, body), withTemporal(config, body)]);
    expect(a).toBe(b);
    expect(existsSync(join(dataDir, 'temporal-dev-server.lock'))).toBe(false);
  });

  it('refuses to join a sibling server of another namespace', async () => {
    // Stands in for a sibling's server process: only its command line is looked at.
    const sibling = spawn('/bin/sh', ['-c', 'sleep 30', 'temporal-server-start-dev'], { stdio: 'ignore' });
    try {
      await writeEmbeddedServerRecord(dataDir, { address: testTemporalAddress(), pid: sibling.pid ?? -1, namespace: 'other' });
      await expect(withTemporal(config, async () => 'joined')).rejects.toThrow(/TEMPORAL_NAMESPACE=other/);
    } finally {
      sibling.kill('SIGKILL');
    }
  });

  it('waits for a silent sibling server that is stopping, then starts its own', { timeout: 90_000 }, async () => {
    // Stands in for the embedded server of a command that is ending: it runs, answers nothing, and
    // exits 7 s later. Failing at once ("does not answer") broke a command run right after another.
    const unused = `127.0.0.1:${await freePort()}`;
    const sibling = spawn('/bin/sh', ['-c', 'sleep 7', 'temporal-server-start-dev'], { stdio: 'ignore' });
    try {
      await writeEmbeddedServerRecord(dataDir, { address: unused, pid: sibling.pid ?? -1, namespace: 'default' });
      const address = await withTemporal(config, async (t) => t.address);
      expect(address).not.toBe(unused);
      expect(isProcessAlive(sibling.pid ?? -1)).toBe(false);
    } finally {
      sibling.kill('SIGKILL');
    }
  });

  it('ignores a record whose pid now belongs to an unrelated process', async () => {
    const unused = `127.0.0.1:${await freePort()}`;
    await writeEmbeddedServerRecord(dataDir, { address: unused, pid: process.pid, namespace: 'default' });
    const address = await withTemporal(config, async (t) => t.address);
    expect(address).not.toBe(unused);
  });

  it('connects to TEMPORAL_ADDRESS without starting anything', async () => {
    const address = testTemporalAddress();
    const result = await withTemporal(
      { ...config, temporal: { ...config.temporal, address } },
      async (t) => ({
        embedded: t.embedded,
        address: t.address,
        native: t.nativeConnection !== undefined,
      }),
      { worker: true },
    );
    expect(result).toEqual({ embedded: false, address, native: true });
    expect(existsSync(embeddedServerFile(dataDir))).toBe(false);
  });

  it('names the fix when TEMPORAL_ADDRESS is unreachable', async () => {
    const address = `127.0.0.1:${await freePort()}`;
    const run = withTemporal({ ...config, temporal: { ...config.temporal, address } }, async () => 'unreachable', { connectTimeoutMs: 500 });
    await expect(run).rejects.toMatchObject({ code: 'TEMPORAL_UNREACHABLE' });
    await expect(run).rejects.toThrow(/TEMPORAL_ADDRESS/);
  });
});
