#!/usr/bin/env node
// Makes sure a Chromium is available for the report tests (test/report/), which render
// `crmsync report` in a real headless browser through puppeteer-core (which downloads none).
// Run by `npm test` (and `npm run setup:chromium`). Quick when present: one stat per candidate.
//
// Missing, and we are root with apt-get (CI, the dev containers): `apt-get update && apt-get install
// -y chromium` from Debian's packages. Otherwise it says how to install it and exits 0, so the
// other tests still run; the report tests then fail, naming this script.
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';

// test/report/chromium.ts looks in the same places.
const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/lib/chromium/chromium'];

function log(msg) {
  process.stderr.write(`[setup-chromium] ${msg}\n`);
}

function found() {
  for (const p of CANDIDATES) {
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // next
    }
  }
  return undefined;
}

function run(cmd, args) {
  log(`${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  return r.status === 0;
}

let path = found();
if (!path) {
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const apt = spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0;
  if (root && apt) {
    log("chromium is missing; installing Debian's package (a few minutes, once)");
    if (run('apt-get', ['update']) && run('apt-get', ['install', '-y', 'chromium'])) path = found();
  }
  if (!path) {
    log(
      `no Chromium at ${CANDIDATES.join(', ')}${root && apt ? ' and apt-get could not install it' : ''}. Install it ` +
        '(Debian/Ubuntu: `sudo apt-get install chromium`), then run `npm run setup:chromium` again. The report tests fail without it.',
    );
    process.exit(0);
  }
}
process.stdout.write(`${path}\n`);
