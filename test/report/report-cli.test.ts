import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../cli/run-cli.js';
import { tempPaths, writeScope } from '../warehouse/temp-warehouse.js';

let p: ReturnType<typeof tempPaths> | undefined;
afterEach(() => p?.cleanup());

const envFor = (t: ReturnType<typeof tempPaths>): Record<string, string> => ({ CRMSYNC_DB: t.dbPath, CRMSYNC_LAKE: t.lakePath, CRMSYNC_DATA_DIR: t.dir, CRMSYNC_LOG_LEVEL: 'warn' });

async function waitForFile(path: string): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const text = await readFile(path, 'utf8').catch(() => null);
    if (text) return text;
    await sleep(50);
  }
  throw new Error(`${path} never appeared`);
}

describe('crmsync report (CLI)', () => {
  it('on a warehouse no sync has filled, says so in each section instead of failing', async () => {
    p = tempPaths();
    // Published empty, as a first sync that found nothing leaves it.
    await writeScope(p, (w) => w.publishLake());
    const out = join(p.dir, 'empty.html');
    const r = await runCli(['report', '--out', out], envFor(p));
    expect(r.code, r.stderr).toBe(0);
    const html = await readFile(out, 'utf8');
    for (const text of [
      'No contacts with a creation date yet',
      'No campaigns synced yet',
      'No funnel step reports synced yet',
      'No tags synced yet',
      'No sync has run yet',
      'the receiver (<code>crmsync webhooks serve</code>) is not in use',
    ]) {
      expect(html).toContain(text);
    }
    expect(html).not.toContain('class="mark');
  });

  it('with --open hands the written file to the desktop opener', async () => {
    if (process.platform !== 'linux') throw new Error('this test stubs xdg-open, the opener on Linux');
    p = tempPaths();
    await writeScope(p, (w) => w.publishLake());
    // A stand-in xdg-open first on PATH records what it was asked to open.
    const opened = join(p.dir, 'opened.txt');
    await writeFile(join(p.dir, 'xdg-open'), `#!/bin/sh\nprintf '%s' "$1" > '${opened}'\n`);
    await chmod(join(p.dir, 'xdg-open'), 0o755);
    const out = join(p.dir, 'r.html');
    const r = await runCli(['report', '--out', out, '--open'], { ...envFor(p), PATH: `${p.dir}:${process.env.PATH ?? ''}` });
    expect(r.code, r.stderr).toBe(0);
    expect(await waitForFile(opened)).toBe(out);
  });

  it('before anything was published, fails naming the fix', async () => {
    p = tempPaths();
    const r = await runCli(['report', '--out', join(p.dir, 'r.html')], envFor(p));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/run `crmsync sync` first.*\[CATALOG_NOT_FOUND\]/);
  });
});
