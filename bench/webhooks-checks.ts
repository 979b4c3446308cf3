// CPU per delivery of the receiver's body checks (issue 17) against what the receiver did with a
// body before them, in the same run: baseline = HMAC check + fatal UTF-8 decode + JSON.parse;
// checked = HMAC check + decodeDeliveryBody (BOM, UTF-8, surrogates, depth) + JSON.parse + the
// event-time check + the body's SHA-256 (replay dedupe). Writes bench/results/webhooks-checks.json.
//   node --import tsx bench/webhooks-checks.ts [--iterations 200000] [--rounds 5]
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Secret } from '../src/secret.js';
import { checkEventTime, DEFAULT_EVENT_TIME_WINDOW } from '../src/webhooks/check-event-time.js';
import { decodeDeliveryBody } from '../src/webhooks/decode-delivery-body.js';
import { bodyKey } from '../src/webhooks/spool-recovery.js';
import { signBody, verifySignature } from '../src/webhooks/verify-signature.js';
import { median } from './runner/median.js';

const { values } = parseArgs({ options: { iterations: { type: 'string', default: '200000' }, rounds: { type: 'string', default: '5' } } });
const N = Number(values.iterations);
const ROUNDS = Number(values.rounds);
const SECRET = 'bench-secret-0123456789abcdef';
const secrets = [new Secret(SECRET)];
// The body bench/webhooks.ts sends.
const body = Buffer.from(
  JSON.stringify({
    event: 'contact.updated',
    timestamp: new Date().toISOString(),
    webhook_id: 1,
    data: { contact: { id: 5, email: 'c5@example.com', first_name: 'Ada', last_name: 'Lovelace', status: 'subscribed', created_at: '2026-01-01 00:00:00' } },
    signature: 'sha256=inner',
  }),
);
const signature = signBody(body, SECRET);
const utf8 = new TextDecoder('utf-8', { fatal: true });

const baseline = (): unknown => verifySignature(body, signature, secrets) && JSON.parse(utf8.decode(body));
const checked = (): unknown => {
  if (!verifySignature(body, signature, secrets)) return null;
  const d = decodeDeliveryBody(body);
  if (!d.ok) return null;
  const json = JSON.parse(d.text) as { timestamp: string };
  return checkEventTime(json.timestamp, Date.now(), DEFAULT_EVENT_TIME_WINDOW) ?? bodyKey(body);
};

/** CPU microseconds per call (user + system), after a warm-up. */
function cpuPerCall(fn: () => unknown): number {
  for (let i = 0; i < 20_000; i++) fn();
  const t = process.cpuUsage();
  for (let i = 0; i < N; i++) fn();
  const u = process.cpuUsage(t);
  return (u.user + u.system) / N;
}

const runs: { baselineUs: number; checkedUs: number; ratio: number }[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const baselineUs = cpuPerCall(baseline);
  const checkedUs = cpuPerCall(checked);
  runs.push({ baselineUs: Number(baselineUs.toFixed(3)), checkedUs: Number(checkedUs.toFixed(3)), ratio: Number((checkedUs / baselineUs).toFixed(3)) });
  process.stdout.write(`round ${r + 1}: before the checks ${baselineUs.toFixed(3)} us, with them ${checkedUs.toFixed(3)} us per delivery (x${(checkedUs / baselineUs).toFixed(3)})\n`);
}
const result = {
  benchmark: 'webhooks-checks',
  at: new Date().toISOString(),
  node: process.version,
  bodyBytes: body.length,
  iterations: N,
  baselineUs: median(runs.map((r) => r.baselineUs)),
  checkedUs: median(runs.map((r) => r.checkedUs)),
  addedUs: Number((median(runs.map((r) => r.checkedUs)) - median(runs.map((r) => r.baselineUs))).toFixed(3)),
  ratio: median(runs.map((r) => r.ratio)),
  runs,
};
mkdirSync(join(import.meta.dirname, 'results'), { recursive: true });
writeFileSync(join(import.meta.dirname, 'results', 'webhooks-checks.json'), `${JSON.stringify(result, null, 2)}\n`);
process.stdout.write(`\nbody checks: ${result.checkedUs} us per delivery against ${result.baselineUs} us before them (+${result.addedUs} us, ratio ${result.ratio}, median of ${ROUNDS} rounds)\n`);
