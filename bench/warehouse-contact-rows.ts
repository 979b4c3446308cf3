// The typing statement of a contact page load (`pageRowsSql` + `typedContactRowsSql`) on the same
// staged page bodies, A/B in one process: the rows read with `json_extract(body,
// '$.subscribers.data[*]')` (`pageRowsSql`, the baseline) against a transform of the body to a
// list of JSON values (the alternative tried for issue 19: cheaper alone, dearer in the
// statement). The two alternate, --rounds times each; medians of process CPU ms per statement.
// The machine is shared: see loadAverage.
//   node --import tsx bench/warehouse-contact-rows.ts [--contacts 20000] [--per-page 500] [--rounds 9] [--label L]
// Figures go to stdout and bench/results/warehouse-contact-rows.json, merged per label.
import { mkdtempSync, rmSync } from 'node:fs';
import { recordLabelledRun } from './runner/record-labelled-run.js';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pageRowsSql, typedContactRowsSql } from '../src/warehouse/contact-page-sql.js';
import { openWarehouse } from '../src/warehouse/index.js';
import { stageColumns } from '../src/warehouse/stage-columns.js';
import { benchContact } from './warehouse-contacts.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const N = arg('contacts', 20_000);
const PER_PAGE = arg('per-page', 500);
const ROUNDS = arg('rounds', 9);
const labelAt = process.argv.indexOf('--label');
const LABEL = labelAt >= 0 ? process.argv[labelAt + 1]! : `${N} contacts, ${PER_PAGE} per page`;

const dir = mkdtempSync(join(tmpdir(), 'crmsync-bench-rows-'));
try {
  const w = await openWarehouse({ dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake'), siteTimeZone: 'UTC' });
  await w.migrate();
  const bodies: string[] = [];
  for (let first = 1; first <= N; first += PER_PAGE) {
    const data = Array.from({ length: Math.min(PER_PAGE, N - first + 1) }, (_, k) => benchContact(first + k).raw);
    bodies.push(JSON.stringify({ subscribers: { total: N, per_page: PER_PAGE, current_page: bodies.length + 1, data } }));
  }
  await stageColumns(w.connection, 'pages', ['seq', 'page', 'body'], bodies, (b) => ['0', '1', b]);
  const before = pageRowsSql('pages');
  const EXTRACT = `json_extract(body, '$.subscribers.data[*]')`;
  if (!before.includes(EXTRACT)) throw new Error('pageRowsSql no longer reads the rows with json_extract, the baseline of this bench; update the bench');
  // The alternative: the same statement with the rows read by a transform (a null row would come
  // out as SQL NULL, not JSON null: none here).
  const now = before.replace(EXTRACT, `json_transform(body, '{"subscribers":{"data":["JSON"]}}').subscribers.data`);
  const ways = { extract: before, transform: now };
  const cpu: Record<string, number[]> = { extract: [], transform: [], extractRowsOnly: [], transformRowsOnly: [] };
  const timeCpu = async (sql: string): Promise<number> => {
    const c = process.cpuUsage();
    await w.connection.run(sql);
    const u = process.cpuUsage(c);
    return (u.user + u.system) / 1000;
  };
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, rows] of Object.entries(ways)) {
      cpu[`${name}RowsOnly`]!.push(await timeCpu(`CREATE OR REPLACE TEMP TABLE x AS SELECT * FROM (${rows})`));
      cpu[name]!.push(await timeCpu(`CREATE OR REPLACE TEMP TABLE x AS ${typedContactRowsSql(`(${rows})`, 'UTC')}`));
    }
  }
  const same = await w.connection.runAndReadAll(
    `SELECT count(*) FROM (${typedContactRowsSql(`(${before})`, 'UTC')}) a FULL JOIN (${typedContactRowsSql(`(${now})`, 'UTC')}) b ON a.position = b.position AND a.page = b.page AND a.seq = b.seq AND a._fingerprint = b._fingerprint AND CAST(a.raw AS VARCHAR) = CAST(b.raw AS VARCHAR) WHERE a.id IS NULL OR b.id IS NULL`,
  );
  if (Number(same.getRows()[0]![0]) !== 0) throw new Error('the two ways typed different rows');
  await w.close();
  const median = (xs: number[]) => Math.round([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!);
  const m = Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, median(v)]));
  const run = {
    at: new Date().toISOString(),
    machine: { cpus: cpus().length, node: process.version },
    contacts: N,
    perPage: PER_PAGE,
    rounds: ROUNDS,
    what: 'process CPU ms (median) of the contact typing statement and of its row extraction alone, json_extract (pageRowsSql, baseline) against json_transform to a list of JSON (alternative), alternated in one process',
    medianCpuMs: m,
    typingCpuRatioTransformToExtract: Math.round((m.transform! / m.extract!) * 1000) / 1000,
    rowsCpuRatioTransformToExtract: Math.round((m.transformRowsOnly! / m.extractRowsOnly!) * 1000) / 1000,
    loadAverage: loadavg().map((x) => Math.round(x * 10) / 10),
  };
  console.log(JSON.stringify(run));
  recordLabelledRun('warehouse-contact-rows', LABEL, run);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
