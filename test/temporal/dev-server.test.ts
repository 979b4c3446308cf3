import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startDevServer } from '../../src/temporal/dev-server.js';
import { locateTemporalCliFromConfig } from '../../src/temporal/locate-cli.js';
import { waitForTemporal } from '../../src/temporal/wait-for-temporal.js';

async function portOpen(address: string): Promise<boolean> {
  const [host, port] = address.split(':');
  return await new Promise((resolve) => {
    const socket = connect({ host, port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function closesWithin(address: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!(await portOpen(address))) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

describe('startDevServer', () => {
  const cliPath = locateTemporalCliFromConfig(loadConfig({ ...process.env })).path;

  it('serves a namespace created at launch, and stop() frees the port', async () => {
    const server = await startDevServer({ cliPath, namespace: 'crmsync-test' });
    try {
      expect(server.address).toMatch(/^127\.0\.0\.1:\d+$/);
      expect(await waitForTemporal({ address: server.address, namespace: 'crmsync-test', timeoutMs: 5_000 })).toBe(true);
    } finally {
      await server.stop();
    }
    expect(await closesWithin(server.address, 5_000)).toBe(true);
  });

  it('does not outlive a parent that is SIGKILLed', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/temporal/dev-server-child.ts'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const address = await new Promise<string>((resolve, reject) => {
        let buffer = '';
        child.stdout.on('data', (chunk: Buffer) => {
          buffer += chunk.toString();
          const line = buffer.split('\n')[0];
          if (buffer.includes('\n') && line) resolve((JSON.parse(line) as { address: string }).address);
        });
        child.once('exit', (code) => reject(new Error(`child exited early (${code})`)));
      });
      expect(await portOpen(address)).toBe(true);
      child.kill('SIGKILL');
      expect(await closesWithin(address, 15_000)).toBe(true);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('fails with the server output when the CLI cannot start', async () => {
    const run = startDevServer({ cliPath: '/bin/false', readyTimeoutMs: 5_000 });
    await expect(run).rejects.toMatchObject({ code: 'TEMPORAL_DEV_SERVER_FAILED' });
    await expect(run).rejects.toThrow(/did not become ready/);
  });
});
