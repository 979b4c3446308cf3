/**
 * The writer's side of a backfill alone: --contacts contacts as listing pages of 500 (bodies made
 * before the clock starts, scanned for their row spans as a fetch does) through the contact sink
 * into the owner with its backfill settings (one DuckDB thread, --memory limit), fed by four
 * producers in the order four parallel ranges deliver them, each waiting at `room()` and keeping
 * at most 8 loads pending, as the range activities do. No simulator, Temporal or lake publish.
 * Modes, alternated round by round on fresh files:
 *   ahead:  the owner as it is (`typeAhead`: the next batch typed beside the running load);
 *   serial: the same owner without `typeAhead` (each batch typed inside its load job).
 *
 *   node --import tsx bench/contact-sink-pipeline.ts [--contacts 100000] [--rounds 2] [--modes ahead,serial] [--memory 128MB] [--label L]
 *
 * Prints wall and process CPU per mode and round; records them under the label in
 * bench/results/contact-sink-pipeline.json.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpuUsage } from 'node:process';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { scanContactPage } from '../src/crm/scan-contact-page.js';
import { createContactSink, type ScannedPage } from '../src/sync/contact-sink.js';
import type { WriteJobs } from '../src/sync/warehouse-port.js';
import { openWarehouseOwner } from '../src/warehouse/index.js';
import { recordLabelledRun } from './runner/record-labelled-run.js';
import { benchContact } from './warehouse-contacts.js';

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
};
const CONTACTS = Number(arg('contacts', '100000'));
const ROUNDS = Number(arg('rounds', '2'));
const MODES = arg('modes', 'ahead,serial').split(',') as ('ahead' | 'serial')[];
const MEMORY = arg('memory', '128MB');
const LABEL = arg('label', 'default');
const PER_PAGE = 500;
const RANGES = 4;
const PENDING_PER_RANGE = 8;

const pageCount = Math.ceil(CONTACTS / PER_PAGE);
const bodies = Array.from({ length: pageCount }, (_, p) => {
  const data = Array.from({ length: PER_PAGE }, (_, k) => benchContact(p * PER_PAGE + k + 1, 0).raw);
  const body = JSON.stringify({ subscribers: { total: CONTACTS, per_page: PER_PAGE, current_page: p + 1, data } });
  const scan = scanContactPage(body, { page: p + 1, perPage: PER_PAGE }, 'GET /subscribers');
  return { body, rowSpans: scan.rowSpans, ids: scan.items.map((r) => r.id!) };
});

async function round(
  mode: 'ahead' | 'serial',
): Promise<{ mode: string; loads: number; loadJobSeconds: number; typeJobSeconds: number; wallSeconds: number; cpuSeconds: number; loadAverage: number[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'crmsync-sink-pipeline-'));
  const owner = await openWarehouseOwner({ dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake'), siteTimeZone: 'UTC', threads: 1, memoryLimit: MEMORY });
  const before = loadavg()[0]!;
  try {
    let jobs = 0;
    // Seconds the writer's queue and the typing queue each ran a job, for how much they overlapped.
    const busy = { load: 0, type: 0 };
    const timed = async <T>(side: 'load' | 'type', job: () => Promise<T>): Promise<T> => {
      const t = performance.now();
      try {
        return await job();
      } finally {
        busy[side] += (performance.now() - t) / 1000;
      }
    };
    const run: WriteJobs['run'] = (job) => {
      jobs++;
      return owner.run((w) => timed('load', () => job(w)));
    };
    const writes: WriteJobs = mode === 'ahead' ? { run, typeAhead: (job) => owner.typeAhead((t) => timed('type', () => job(t))) } : { run };
    const sink = createContactSink(writes, { publishColdBucketsAfterMs: false });
    const syncedAt = new Date();
    const per = Math.ceil(pageCount / RANGES);
    const cpu0 = cpuUsage();
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: RANGES }, async (_, r) => {
        const inFlight: Promise<unknown>[] = [];
        for (let p = r * per; p < Math.min(pageCount, (r + 1) * per); p++) {
          await sink.room();
          const { body, rowSpans, ids } = bodies[p]!;
          const page: ScannedPage = { scanKey: 'k', page: p + 1, items: [], raw: { bodies: [body], rowSpans, rows: ids.length, ids }, reportedTotal: CONTACTS, loadId: 'L', syncedAt };
          inFlight.push(sink.add(page));
          if (inFlight.length >= PENDING_PER_RANGE) await inFlight.shift();
        }
        await Promise.all(inFlight);
      }),
    );
    const wallSeconds = (performance.now() - t0) / 1000;
    const c = cpuUsage(cpu0);
    const r2 = (x: number) => Math.round(x * 100) / 100;
    return {
      mode,
      loads: jobs,
      loadJobSeconds: r2(busy.load),
      typeJobSeconds: r2(busy.type),
      wallSeconds: Math.round(wallSeconds * 100) / 100,
      cpuSeconds: Math.round((c.user + c.system) / 1e4) / 100,
      loadAverage: [before, loadavg()[0]!].map((x) => Math.round(x * 10) / 10),
    };
  } finally {
    await owner.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const runs = [];
for (let r = 0; r < ROUNDS; r++) {
  for (const mode of r % 2 === 0 ? MODES : [...MODES].reverse()) {
    const result = await round(mode);
    runs.push(result);
    console.log(JSON.stringify(result));
  }
}
const file = recordLabelledRun('contact-sink-pipeline', LABEL, { at: new Date().toISOString(), contacts: CONTACTS, memoryLimit: MEMORY, threads: 1, runs });
console.log(`recorded in ${file}`);
