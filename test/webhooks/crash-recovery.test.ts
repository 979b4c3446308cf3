import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { withSpool } from '../../src/webhooks/spool.js';
import { makeDelivery, withTempDir } from './helpers.js';

const SECRET = 'crash-test-secret-0123456789';
const CHILD = join(import.meta.dirname, 'fixtures', 'receiver-child.ts');

async function startChild(spoolDir: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, spoolDir, SECRET], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('receiver child did not start in 20 s')), 20_000);
    lines.once('line', (l) => {
      clearTimeout(timer);
      resolve((JSON.parse(l) as { url: string }).url);
    });
    child.once('exit', (code) => reject(new Error(`receiver child exited early (${code})`)));
  });
  return { child, url };
}

const exited = (child: ChildProcess) => new Promise<void>((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once('exit', () => r())));

describe('receiver killed with SIGKILL', () => {
  it('loses no acknowledged delivery, and recognises them as duplicates after a restart', async () => {
    await withTempDir(async (dir) => {
      const spoolDir = join(dir, 'spool');
      const first = await startChild(spoolDir);
      const acked: string[] = [];
      const sent = Array.from({ length: 600 }, (_, i) => makeDelivery({ secret: SECRET, deliveryId: `crash-${i}` }));
      let killed = false;
      // Eight concurrent senders; the child is killed as soon as 150 deliveries were acknowledged,
      // while others are in flight (written, maybe not yet fsynced, not yet acknowledged).
      let next = 0;
      const sender = async () => {
        while (next < sent.length && !killed) {
          const d = sent[next++]!;
          try {
            const res = await request(first.url, { method: 'POST', headers: d.headers, body: d.body });
            await res.body.dump();
            if (res.statusCode === 202 || res.statusCode === 200) {
              acked.push(d.deliveryId);
              if (acked.length >= 150 && !killed) {
                killed = true;
                first.child.kill('SIGKILL');
              }
            }
          } catch {
            // Connection reset by the kill: not acknowledged, the CRM would retry.
          }
        }
      };
      await Promise.all(Array.from({ length: 8 }, sender));
      await exited(first.child);
      expect(first.child.signalCode).toBe('SIGKILL');
      expect(acked.length).toBeGreaterThanOrEqual(150);

      // Everything acknowledged is in the log, once.
      await withSpool({ dir: spoolDir }, async (spool) => {
        const ids = (await spool.read(0, 10_000)).map((r) => r.deliveryId);
        expect(new Set(ids).size).toBe(ids.length);
        const stored = new Set(ids);
        expect(acked.filter((id) => !stored.has(id))).toEqual([]);
      });

      // A restarted receiver rebuilds its dedup index: the CRM's retries are acknowledged, not stored again.
      const second = await startChild(spoolDir);
      try {
        for (const id of acked.slice(0, 50)) {
          const d = sent.find((s) => s.deliveryId === id)!;
          const res = await request(second.url, { method: 'POST', headers: d.headers, body: d.body });
          expect(res.statusCode).toBe(200);
          expect(await res.body.json()).toMatchObject({ status: 'duplicate' });
        }
        const fresh = makeDelivery({ secret: SECRET, deliveryId: 'after-restart' });
        const res = await request(second.url, { method: 'POST', headers: fresh.headers, body: fresh.body });
        await res.body.dump();
        expect(res.statusCode).toBe(202);
      } finally {
        second.child.kill('SIGTERM');
        await exited(second.child);
      }
    });
  });
});
