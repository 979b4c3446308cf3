#!/usr/bin/env node
// Installs a `crmsync` command for this checkout: a two-line shell script in ~/.local/bin (or
// --bin-dir DIR) that runs bin/crmsync.js from here, in whatever folder it is called from (so
// `.env` and `./data` are that folder's). Nothing is fetched and no registry is asked: `npx
// crmsync` outside this checkout would ask the public registry for a package of that name.
// Run by `npm run install-cli`; running it again rewrites the shim (for example after a move).
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const at = args.indexOf('--bin-dir');
const binDir = resolve(at >= 0 && args[at + 1] ? args[at + 1] : join(homedir(), '.local', 'bin'));
const entry = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'crmsync.js');
const shim = join(binDir, 'crmsync');
const quoted = (s) => `'${s.replaceAll("'", `'\\''`)}'`;

mkdirSync(binDir, { recursive: true });
writeFileSync(shim, `#!/bin/sh\n# crmsync from ${resolve(entry, '..', '..')} (npm run install-cli)\nexec ${quoted(process.execPath)} ${quoted(resolve(entry))} "$@"\n`);
chmodSync(shim, 0o755);
console.log(`installed ${shim}`);
const onPath = (process.env.PATH ?? '').split(delimiter).some((p) => p && resolve(p) === binDir);
if (!onPath) console.log(`${binDir} is not on your PATH; add it, for example: echo 'export PATH="${binDir}:$PATH"' >> ~/.profile`);
