import { readFileSync } from 'node:fs';

/** The processes `pid` started and that still run (Linux: the kernel's list of its children). */
export function childPids(pid: number): number[] {
  return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
}
