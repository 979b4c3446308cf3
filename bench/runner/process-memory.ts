import { readFileSync } from 'node:fs';

/**
 * A process's resident set now and at its peak (the kernel's high-water mark, VmHWM), in MB,
 * from /proc (Linux). `pid` defaults to this process.
 */
export function processMemoryMb(pid: number | 'self' = 'self'): { rss: number; peak: number; anon: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mb = (key: string): number => Math.round(Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) / 1024);
  return { rss: mb('VmRSS'), peak: mb('VmHWM'), anon: mb('RssAnon') };
}

/** CPU seconds a process has used (user + system), from /proc (Linux): less sensitive than wall time to other work on a shared machine. */
export function processCpuSeconds(pid: number | 'self' = 'self'): number {
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * The process that does the work when `pid` is a launcher: `crmsync worker` starts itself again
 * with settings node takes only at start (src/cli/relaunch-worker.ts), so its one child is the
 * worker. `pid` itself when it started none (Linux).
 */
export function launchedProcess(pid: number): number {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  return children.length === 1 ? Number(children[0]) : pid;
}
