/**
 * In-process CPU of reading one contacts page: JSON.parse alone (what the bare loop does) versus
 * JSON.parse plus the client's envelope reading, validation and normalization (`parsePage` with the
 * contact schema). No network: the page bodies are fetched once from the simulator. Aid for
 * bench/client.ts, whose gap is this per-page CPU; nothing is recorded.
 *
 *   node --import tsx bench/client-parse.ts [perPage=100] [iterations=3000] [timezone=UTC]
 */
import { request } from 'undici';
import { parsePage } from '../src/crm/parse.js';
import { buildSchemas } from '../src/crm/schemas/index.js';
import { createTimestampNormalizer } from '../src/crm/timestamps.js';
import { startSimulator } from '../src/simulator/index.js';

const [perPage = 100, iterations = 3000] = process.argv.slice(2, 4).map(Number);
const timezone = process.argv[4] ?? 'UTC';
const sim = await startSimulator({ contacts: perPage * 20, seed: 5 });
const auth = `Basic ${Buffer.from(`${sim.credentials.username}:${sim.credentials.password}`).toString('base64')}`;
const bodies: string[] = [];
try {
  for (let p = 1; p <= 20; p++) {
    const res = await request(`${sim.baseUrl}/subscribers?page=${p}&per_page=${perPage}&order_by=id&order_type=ASC`, { headers: { authorization: auth } });
    bodies.push(await res.body.text());
  }
} finally {
  await sim.close();
}
const schemas = buildSchemas(createTimestampNormalizer(timezone));
const q = { page: 1, perPage };

function time(fn: (body: string) => unknown): number {
  const t = process.cpuUsage();
  for (let i = 0; i < iterations; i++) fn(bodies[i % bodies.length]!);
  const u = process.cpuUsage(t);
  return (u.user + u.system) / iterations;
}
const jsonOnly = (b: string) => JSON.parse(b);
const client = (b: string) => parsePage(JSON.parse(b), ['subscribers'], schemas.Contact, q, 'GET /subscribers');
const normalizeOnly = bodies.map((b) => JSON.parse(b) as unknown);
let k = 0;
const normalize = () => parsePage(normalizeOnly[k++ % normalizeOnly.length], ['subscribers'], schemas.Contact, q, 'GET /subscribers');
for (let r = 0; r < 5; r++) {
  const a = time(jsonOnly);
  const b = time(client);
  const c = time(normalize);
  console.log(`JSON.parse ${a.toFixed(0)} us/page, JSON.parse + parsePage ${b.toFixed(0)} us/page (+${(b - a).toFixed(0)}), parsePage alone ${c.toFixed(0)} us/page`);
}
