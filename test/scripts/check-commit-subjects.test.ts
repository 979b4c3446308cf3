import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const script = new URL('../../scripts/check-commit-subjects.mjs', import.meta.url).pathname;
const dirs: string[] = [];

function repo(): { dir: string; commit(subject: string): string } {
  const dir = mkdtempSync(join(tmpdir(), 'crmsync-subjects-'));
  dirs.push(dir);
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.test', '-c', 'commit.gpgsign=false', ...args], { cwd: dir, encoding: 'utf8' }).trim();
  git('init', '-q', '-b', 'main');
  let n = 0;
  return {
    dir,
    commit(subject) {
      writeFileSync(join(dir, 'f.txt'), String(n++));
      git('add', 'f.txt');
      git('commit', '-q', '-m', subject, '-m', 'why it was done');
      return git('rev-parse', 'HEAD');
    },
  };
}

function check(cwd: string, base: string) {
  return spawnSync(process.execPath, [script, '--base', base], { cwd, encoding: 'utf8' });
}

const long = `A subject that goes on and on past the seventy-two characters that git log shows`;

afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('scripts/check-commit-subjects.mjs', () => {
  it('fails on a subject over 72 characters after the base, naming it and the fix', () => {
    const r = repo();
    r.commit(long); // before the base: old history is not rewritten
    const base = r.commit('The base');
    expect(check(r.dir, base).status).toBe(0);
    r.commit('Short subject');
    const bad = r.commit(long);
    const out = check(r.dir, base);
    expect(out.status).toBe(1);
    expect(out.stderr).toContain(bad.slice(0, 7));
    expect(out.stderr).toContain(`(${long.length})`);
    expect(out.stderr).toMatch(/git rebase -i/);
    expect(out.stderr).not.toContain('Short subject');
  });

  it('counts characters, not bytes, and allows exactly 72', () => {
    const r = repo();
    const base = r.commit('The base');
    r.commit('é'.repeat(72));
    expect(check(r.dir, base).status).toBe(0);
    r.commit('x'.repeat(73));
    expect(check(r.dir, base).status).toBe(1);
  });

  it('in a shallow clone that does not reach the base, checks every commit it holds', () => {
    const r = repo();
    const base = r.commit('The base');
    r.commit('Short subject');
    r.commit(long);
    const shallow = mkdtempSync(join(tmpdir(), 'crmsync-shallow-'));
    dirs.push(shallow);
    execFileSync('git', ['clone', '-q', '--depth', '1', `file://${r.dir}`, join(shallow, 'c')]);
    const out = check(join(shallow, 'c'), base);
    expect(out.stdout).toMatch(/shallow clone/);
    expect(out.status).toBe(1);
  });

  it('names the fix when the base is missing from a full clone', () => {
    const r = repo();
    r.commit('The base');
    const out = check(r.dir, '0123456789abcdef0123456789abcdef01234567');
    expect(out.status).toBe(2);
    expect(out.stderr).toMatch(/git fetch --unshallow|--base/);
  });
});
