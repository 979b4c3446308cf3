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
