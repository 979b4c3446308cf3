#!/usr/bin/env node
// Makes sure a Temporal CLI (for `temporal server start-dev`) is available, building it with Go
// when it is not. Run by `npm run setup`, `npm test` and `npm run demo`. Idempotent: when the
// binary is already cached this takes milliseconds.
//
// Lookup order (src/temporal/locate-cli.ts follows the same order, and a test checks they agree):
//   1. TEMPORAL_CLI_PATH
//   2. ${XDG_CACHE_HOME:-~/.cache}/crmsync/temporal-v1.5.1/temporal
//   3. `temporal` on PATH (any version works for start-dev; 1.5.1 is what we test with)
//   4. build: GOTOOLCHAIN=local go install github.com/temporalio/cli/cmd/temporal@v1.5.1
//
// Prints the chosen path as the last line of stdout; progress goes to stderr.
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, mkdirSync, realpathSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { pathToFileURL } from 'node:url';

export const TEMPORAL_CLI_VERSION = '1.5.1';
// The `go` directive of the CLI's go.mod; GOTOOLCHAIN=local forbids fetching a newer toolchain.
const MIN_GO = [1, 25];
const GO_PACKAGE = `github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_CLI_VERSION}`;

function log(msg) {
  process.stderr.write(`[setup-temporal] ${msg}\n`);
}

function isExecutable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function cacheDir(env = process.env) {
  const base = env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'crmsync', `temporal-v${TEMPORAL_CLI_VERSION}`);
}

function onPath(env) {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, 'temporal');
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

function versionOf(path) {
  const r = spawnSync(path, ['--version'], { encoding: 'utf8', timeout: 15_000 });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/** Returns { path, source } without building anything, or undefined. */
export function locate(env = process.env) {
  if (env.TEMPORAL_CLI_PATH) {
    if (!isExecutable(env.TEMPORAL_CLI_PATH)) {
      throw new Error(`TEMPORAL_CLI_PATH=${env.TEMPORAL_CLI_PATH} is not an executable file; fix the path or unset it to use the cached build.`);
    }
    return { path: env.TEMPORAL_CLI_PATH, source: 'TEMPORAL_CLI_PATH' };
  }
  const cached = join(cacheDir(env), 'temporal');
  if (isExecutable(cached)) return { path: cached, source: 'cache' };
  const fromPath = onPath(env);
  if (fromPath) return { path: fromPath, source: 'PATH' };
  return undefined;
}

async function build(env) {
  const dir = cacheDir(env);
  const go = spawnSync('go', ['version'], { encoding: 'utf8', env });
  if (go.error || go.status !== 0) {
    throw new Error(
      'No Temporal CLI found and Go is not installed, so it cannot be built. Install Go 1.25 or later ' +
        '(https://go.dev/doc/install, or your package manager) and run `npm run setup` again; or install the ' +
        'Temporal CLI yourself and set TEMPORAL_CLI_PATH to it.',
    );
  }
  const [, major, minor] = /go(\d+)\.(\d+)/.exec(go.stdout) ?? [];
  if (major !== undefined && (Number(major) < MIN_GO[0] || (Number(major) === MIN_GO[0] && Number(minor) < MIN_GO[1]))) {
    throw new Error(
      `${go.stdout.trim()} is too old: Temporal CLI v${TEMPORAL_CLI_VERSION} needs Go ${MIN_GO.join('.')} or later. ` +
        'Upgrade Go and run `npm run setup` again, or set TEMPORAL_CLI_PATH to a Temporal CLI you have.',
    );
  }
  mkdirSync(dir, { recursive: true });
  // Build into a scratch dir and rename, so an interrupted build never leaves a half binary cached.
  const scratch = join(dir, `.build-${process.pid}`);
  mkdirSync(scratch, { recursive: true });
  log(`building Temporal CLI v${TEMPORAL_CLI_VERSION} with ${go.stdout.trim()} (several minutes, once)...`);
  const started = Date.now();
  const ticker = setInterval(() => log(`  still building... ${Math.round((Date.now() - started) / 1000)}s`), 30_000);
  try {
    const code = await new Promise((resolve) => {
      const child = spawn('go', ['install', GO_PACKAGE], {
        env: { ...env, GOTOOLCHAIN: 'local', GOBIN: scratch },
        stdio: ['ignore', 'inherit', 'inherit'],
      });
      child.once('error', (err) => resolve(err.message));
      child.once('exit', (status, signal) => resolve(status ?? signal));
    });
    if (code !== 0) {
      throw new Error(
        `\`go install ${GO_PACKAGE}\` failed (${code}). Check the Go output above; ` +
          'a Go older than 1.25 (what the CLI needs) is the usual cause (GOTOOLCHAIN=local forbids downloading a newer one).',
      );
    }
    renameSync(join(scratch, 'temporal'), join(dir, 'temporal'));
  } finally {
    clearInterval(ticker);
    rmSync(scratch, { recursive: true, force: true });
  }
  log(`built ${join(dir, 'temporal')} in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  return { path: join(dir, 'temporal'), source: 'built' };
}

export async function ensureTemporalCli(env = process.env) {
  const started = Date.now();
  const found = locate(env) ?? (await build(env));
  const version = versionOf(found.path);
  if (!version) throw new Error(`${found.path} does not run (\`temporal --version\` failed); delete it or set TEMPORAL_CLI_PATH.`);
  if (found.source === 'PATH' && !version.includes(TEMPORAL_CLI_VERSION)) {
    log(`note: using ${found.path} (${version}); crmsync is tested with v${TEMPORAL_CLI_VERSION}, other versions usually work.`);
  }
  log(`Temporal CLI: ${found.path} (${found.source}; ${version}) [${Date.now() - started} ms]`);
  return found.path;
}

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href;
if (isMain) {
  try {
    process.stdout.write(`${await ensureTemporalCli()}\n`);
  } catch (err) {
    log(err instanceof Error ? err.message : String(err));
    process.exit(1);
  }
}
