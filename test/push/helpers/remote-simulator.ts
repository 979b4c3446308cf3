import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { SimulatorOptions, SimulatorStats, SimulatorTruth } from '../../../src/simulator/index.js';

export interface RemoteSimulator {
  baseUrl: string;
  credentials: { username: string; password: string };
  truth(): Promise<SimulatorTruth>;
  stats(): Promise<SimulatorStats>;
}

/** A simulator in a child process (test/push/helpers/sim-child.ts), read through its admin endpoint. */
export async function withRemoteSimulator<T>(options: SimulatorOptions, fn: (sim: RemoteSimulator) => Promise<T>): Promise<T> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/push/helpers/sim-child.ts', JSON.stringify(options)], { stdio: ['pipe', 'pipe', 'inherit'] });
  try {
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`simulator child exited with ${code}`)));
    });
    const { baseUrl, adminUrl, credentials } = JSON.parse(line) as { baseUrl: string; adminUrl: string; credentials: { username: string; password: string } };
    const auth = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
    const admin = async <R>(path: string): Promise<R> => {
      const res = await fetch(adminUrl.replace(/\/truth$/, path), { headers: { authorization: auth } });
      if (!res.ok) throw new Error(`simulator admin ${path}: HTTP ${res.status}`);
      return (await res.json()) as R;
    };
    return await fn({ baseUrl, credentials, truth: () => admin('/truth'), stats: () => admin('/stats') });
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.stdin?.end();
    await exited;
  }
}
