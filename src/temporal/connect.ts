import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { Config } from '../config.js';
import { startDevServer, type DevServer } from './dev-server.js';
import { readEmbeddedServerRecord, removeEmbeddedServerRecord, writeEmbeddedServerRecord } from './embedded-server-file.js';
import { TemporalUnreachableError } from './errors.js';
import { locateTemporalCliFromConfig } from './locate-cli.js';
import { waitForTemporal } from './wait-for-temporal.js';

export interface TemporalHandle {
  client: Client;
  connection: Connection;
  /** Present when asked for with `{ worker: true }`: workers need the native (Rust core) connection. */
  nativeConnection: NativeConnection | undefined;
  address: string;
  namespace: string;
  /** True when no TEMPORAL_ADDRESS was set and a local dev server (ours or a sibling's) is used. */
  embedded: boolean;
}

export interface WithTemporalOptions {
  /** Also open a NativeConnection for workers. */
  worker?: boolean;
  /** How long to try reaching TEMPORAL_ADDRESS before giving up. */
  connectTimeoutMs?: number;
}

type TemporalConfig = Pick<Config, 'temporal' | 'dataDir'>;

/**
 * Runs `fn` with a connected Temporal client. With TEMPORAL_ADDRESS set it connects there;
 * otherwise it joins the embedded dev server another crmsync process runs on the same data
 * directory, or starts one itself (state in `<dataDir>/temporal.sqlite`, so schedules survive
 * restarts) and stops it when `fn` settles. Connections are closed in every case.
 */
export async function withTemporal<T>(config: TemporalConfig, fn: (t: TemporalHandle) => Promise<T>, options: WithTemporalOptions = {}): Promise<T> {
  const namespace = config.temporal.namespace;
  const { address, server } = await resolveServer(config);
  try {
    const connection = await connect(address, options.connectTimeoutMs ?? 10_000, server !== undefined || !config.temporal.address);
    try {
      const nativeConnection = options.worker ? await NativeConnection.connect({ address }) : undefined;
      try {
        const client = new Client({ connection, namespace });
        return await fn({ client, connection, nativeConnection, address, namespace, embedded: !config.temporal.address });
      } finally {
        await nativeConnection?.close();
      }
    } finally {
      await connection.close();
    }
  } finally {
    if (server) {
      await removeEmbeddedServerRecord(config.dataDir, server.pid).catch(() => undefined);
      await server.stop();
    }
  }
}

async function resolveServer(config: TemporalConfig): Promise<{ address: string; server: DevServer | undefined }> {
  if (config.temporal.address) return { address: config.temporal.address, server: undefined };
  const namespace = config.temporal.namespace;
  const sibling = await readEmbeddedServerRecord(config.dataDir);
  if (sibling && sibling.namespace === namespace && (await waitForTemporal({ address: sibling.address, namespace, timeoutMs: 3_000 }))) {
    return { address: sibling.address, server: undefined };
  }
  await mkdir(config.dataDir, { recursive: true });
  const cli = locateTemporalCliFromConfig(config);
  const server = await startDevServer({ cliPath: cli.path, namespace, dbFile: join(config.dataDir, 'temporal.sqlite') });
  await writeEmbeddedServerRecord(config.dataDir, { address: server.address, pid: server.pid, namespace });
  return { address: server.address, server };
}

async function connect(address: string, timeoutMs: number, embedded: boolean): Promise<Connection> {
  try {
    return await Connection.connect({ address, connectTimeout: timeoutMs });
  } catch (err) {
    const fix = embedded
      ? 'the embedded dev server stopped answering; run the command again, or set TEMPORAL_ADDRESS to a running Temporal'
      : 'start Temporal there (for example `docker compose up -d temporal`), fix TEMPORAL_ADDRESS, or unset it to use an embedded dev server';
    throw new TemporalUnreachableError(`Cannot reach Temporal at ${address}: ${fix}.`, { cause: err });
  }
}
