import { readFileSync } from 'node:fs';

/**
 * A process's resident set now and at its peak (the kernel's high-water mark, VmHWM), in MB,
 * from /proc (Linux). `pid` defaults to this process.
 */
export function processMemoryMb(pid: number | 'self' = 'self'): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mb = (key: string): number => Math.round(Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) / 1024);
  return { rss: mb('VmRSS'), peak: mb('VmHWM') };
}
