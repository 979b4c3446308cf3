import { readFileSync } from 'node:fs';

/** Busy and total jiffies of the whole machine (all cores), from /proc/stat; undefined off Linux. */
function readMachineJiffies(): { busy: number; total: number } | undefined {
  let line: string;
  try {
    line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  } catch {
    return undefined;
  }
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const total = v.reduce((a, b) => a + b, 0);
  // idle + iowait
  return { busy: total - (v[3] ?? 0) - (v[4] ?? 0), total };
}

export interface MachineCpu {
  /** Cores busy on average over the sampled span (all processes of the machine). */
  meanCoresBusy: number;
  /** Share of the samples with fewer than `belowCores` cores busy: how long the run left cores idle. */
  shareBelow: number;
  belowCores: number;
  samples: number;
}

/**
 * Samples how many of the machine's `cores` are busy every `intervalMs` until the returned
 * function is called, which gives the mean and the share of samples under `belowCores` (e.g. 1.25
 * on 2 cores: one core working while the other idles). Undefined off Linux.
 */
export function sampleMachineCpu(cores: number, intervalMs = 100, belowCores = 1.25): () => MachineCpu | undefined {
  const busy: number[] = [];
  let last = readMachineJiffies();
  const first = last;
  const timer = setInterval(() => {
    const now = readMachineJiffies();
    if (!now || !last || now.total === last.total) return;
    busy.push((cores * (now.busy - last.busy)) / (now.total - last.total));
    last = now;
  }, intervalMs);
  return () => {
    clearInterval(timer);
    const end = readMachineJiffies();
    if (!first || !end || end.total === first.total || busy.length === 0) return undefined;
    const round = (x: number) => Math.round(x * 100) / 100;
    return {
      meanCoresBusy: round((cores * (end.busy - first.busy)) / (end.total - first.total)),
      shareBelow: round(busy.filter((b) => b < belowCores).length / busy.length),
      belowCores,
      samples: busy.length,
    };
  };
}
