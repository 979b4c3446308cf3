import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withEmbeddedServerLock } from '../../src/temporal/embedded-server-lock.js';

// A pid that cannot exist (above Linux's pid_max): the holder of a lock left by a crash.
const DEAD_PID = 2147483646;

describe('withEmbeddedServerLock', () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'crmsync-lock-'));
  });
  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('lets one holder in at a time when several waiters find the same stale lock', async () => {
    // Two commands that both saw a dead holder used to both remove the lock; the slower removal
    // deleted the faster one's new lock, and both started a server on one SQLite file.
    let inside = 0;
    let most = 0;
    const body = async (): Promise<void> => {
      most = Math.max(most, ++inside);
      await new Promise((r) => setTimeout(r, 2));
      inside--;
    };
    for (let round = 0; round < 25; round++) {
      await writeFile(join(dataDir, 'temporal-dev-server.lock'), `${DEAD_PID}\n`);
      await Promise.all(Array.from({ length: 6 }, () => withEmbeddedServerLock(dataDir, body, 30_000, 5)));
    }
    expect(most).toBe(1);
    // Nothing is left behind: no lock, no guard, no drafts.
    expect(await readdir(dataDir)).toEqual([]);
  });

  it('takes over when the stale lock and its takeover guard were both left by dead processes', async () => {
    await writeFile(join(dataDir, 'temporal-dev-server.lock'), `${DEAD_PID}\n`);
    await writeFile(join(dataDir, 'temporal-dev-server.lock.takeover'), `${DEAD_PID} abc\n`);
    expect(await withEmbeddedServerLock(dataDir, async () => 'started', 30_000)).toBe('started');
    expect(existsSync(join(dataDir, 'temporal-dev-server.lock'))).toBe(false);
  });

  it('waits for a live holder and names it when giving up', async () => {
    await writeFile(join(dataDir, 'temporal-dev-server.lock'), `${process.pid} token\n`);
    await expect(withEmbeddedServerLock(dataDir, async () => 'started', 300)).rejects.toThrow(new RegExp(`pid ${process.pid}\\b.*delete .*temporal-dev-server\\.lock`));
  });
});
