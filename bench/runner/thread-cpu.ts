import { readdirSync, readFileSync } from 'node:fs';

/**
 * User + system CPU ms of each thread of a process (`self` or a pid), by thread id, from /proc;
 * undefined where there is none (not Linux). A thread that ends while it is read is left out.
 */
export function readThreadCpuMs(pid: number | 'self'): Map<string, number> | undefined {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
  const cpu = new Map<string, number>();
  for (const tid of tids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue;
    }
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    cpu.set(tid, (Number(f[11]) + Number(f[12])) * 10); // utime + stime, in ticks of 10 ms
  }
  return cpu;
}

/** A thread's name (`comm`) by thread id, for the threads `readThreadCpuMs` read. */
export function readThreadNames(pid: number): Map<string, string> {
  const names = new Map<string, string>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      names.set(tid, readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim());
    } catch {
      // ended while read
    }
  }
  return names;
}

/**
 * CPU seconds a process spent between two readings of `readThreadCpuMs`, by thread name, the main
 * thread (whose id is the pid) apart as `main`. Threads that ended in between are not counted.
 */
export function threadCpuByName(pid: number, before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const names = readThreadNames(pid);
  const sums: Record<string, number> = {};
  for (const [tid, ms] of after) {
    const name = tid === String(pid) ? 'main' : (names.get(tid) ?? 'ended');
    sums[name] = (sums[name] ?? 0) + (ms - (before.get(tid) ?? 0)) / 1000;
  }
  for (const k of Object.keys(sums)) sums[k] = Math.round(sums[k]! * 100) / 100;
  return sums;
}
