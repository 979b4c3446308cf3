#!/usr/bin/env node
// Fails when a commit made after the base commit has a subject longer than 72 characters: `git log
// --oneline`, review tools and merge summaries cut there, and the why belongs in the body. Older
// history is not rewritten, so only commits after BASE count. Run by `npm run lint`.
//
//   node scripts/check-commit-subjects.mjs [--base <rev>] [--max <n>]
import { execFileSync } from 'node:child_process';

/** main's HEAD when the rule was adopted (issue 18). */
const BASE = '39e5fa31c3e46fc5caf331f8a756bd680d4decec';
const MAX = 72;

function git(args) {
  return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

function tryGit(args) {
  try {
    return git(args);
  } catch {
    return undefined;
  }
}

function option(name, fallback) {
  const i = process.argv.indexOf(name);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1] : fallback;
}

const base = option('--base', BASE);
const max = Number(option('--max', String(MAX)));

if (tryGit(['rev-parse', '--is-inside-work-tree']) !== 'true') {
  console.log('check-commit-subjects: not a git checkout (an exported tree has no history); nothing to check');
  process.exit(0);
}

let range;
if (tryGit(['cat-file', '-e', `${base}^{commit}`]) !== undefined) {
  range = [`${base}..HEAD`];
} else if (tryGit(['rev-parse', '--is-shallow-repository']) === 'true') {
  // A shallow clone (CI may clone with --depth) that does not reach the base holds only commits
  // made after it, so all of them are checked.
  console.log(`check-commit-subjects: shallow clone without ${base.slice(0, 12)}; checking every commit it holds`);
  range = ['HEAD'];
} else {
  console.error(`check-commit-subjects: base commit ${base} is not in this repository; fetch the full history (git fetch --unshallow) or pass --base <rev>`);
  process.exit(2);
}

// %x00 between fields and records: subjects may hold any printable character.
const log = git(['log', '--no-merges', '--format=%h%x00%s%x00', ...range]);
const fields = log.split('\0');
const tooLong = [];
for (let i = 0; i + 1 < fields.length; i += 2) {
  const hash = fields[i].trim();
  const subject = fields[i + 1];
  if ([...subject].length > max) tooLong.push({ hash, subject });
}

if (tooLong.length > 0) {
  console.error(`check-commit-subjects: ${tooLong.length} commit subject(s) after ${base.slice(0, 12)} are longer than ${max} characters:`);
  for (const c of tooLong) console.error(`  ${c.hash} (${[...c.subject].length}) ${c.subject}`);
  console.error(`Shorten them with git commit --amend or git rebase -i (reword) before merging; put the why in the body.`);
  process.exit(1);
}
console.log(`check-commit-subjects: every commit subject after ${base.slice(0, 12)} is ${max} characters or fewer`);
