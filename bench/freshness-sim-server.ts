/**
 * Child process for bench/freshness.ts: the simulator in real mode (fluentcrm-2.9) on its own event
 * loop, as a remote CRM would be. Prints its base URL and credentials as one JSON line, then
 * answers commands on stdin, one JSON line each on stdout:
 *   `stats`      request counts by route
 *   `edit N`     edits N contacts (no inserts or deletes): 60% field edits, 20% tag-only, 20% list-only
 * Exits when stdin closes.
 */
import { createInterface } from 'node:readline';
import { REAL_DEPLOYMENT_LATENCY, startSimulator } from '../src/simulator/index.js';

const contacts = Number(process.argv[2] ?? 100_000);
// `real`: the real deployment's time by page size; else a fixed range in ms (`min max`), or none.
const latency = process.argv[3] === 'real' ? { byPerPage: REAL_DEPLOYMENT_LATENCY } : undefined;
const [latencyMin = 0, latencyMax = latencyMin] = latency ? [] : process.argv.slice(3).map(Number);
const fixed = latencyMax > 0 ? { min: latencyMin, max: latencyMax } : undefined;
const latencyMs = latency ?? fixed;
const sim = await startSimulator({ contacts, seed: 15, mode: 'real', ...(latencyMs ? { faults: { latencyMs } } : {}) });
process.stdout.write(`${JSON.stringify({ baseUrl: sim.baseUrl, credentials: sim.credentials })}\n`);

let round = 0;
function edit(n: number): { edited: number } {
  round++;
  const all = sim.truth().contacts;
  const tag = 8;
  const list = 5;
  let edited = 0;
  // Distinct contacts; a tag or list edit goes to a contact that lacks it, so every edit is a change.
  for (let k = 0, i = 0; edited < n && k < all.length; k++) {
    const c = all[(k * 7919 + round * 104_729) % all.length]!;
    const kind = i % 5;
    if (kind === 3 && c.tags.includes(tag)) continue;
    if (kind === 4 && c.lists.includes(list)) continue;
    if (kind < 3) sim.mutate.updateContact(c.id, { first_name: `Bench${round}-${i}`, city: `City ${round}` });
    else if (kind === 3) sim.mutate.addTag(c.id, tag);
    else sim.mutate.addToList(c.id, list);
    edited++;
    i++;
  }
  return { edited };
}

createInterface({ input: process.stdin }).on('line', (line) => {
  const [cmd, arg] = line.trim().split(/\s+/);
  if (cmd === 'stats') process.stdout.write(`${JSON.stringify(sim.stats())}\n`);
  else if (cmd === 'edit') process.stdout.write(`${JSON.stringify(edit(Number(arg)))}\n`);
  else process.stdout.write(`${JSON.stringify({ error: `unknown command ${cmd}` })}\n`);
});
process.stdin.on('end', () => {
  sim.close().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err); // a child process: its parent shows this stderr
      process.exit(1);
    },
  );
});
