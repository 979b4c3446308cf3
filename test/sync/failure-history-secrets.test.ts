import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streamWorkflowId, syncWorkflowId } from '../../workflows/sync-ids.js';
import { startReplayServer, type ReplayServer } from '../crm/helpers/replay-server.js';
import { RECORDING_PASSWORD, RECORDING_USERNAME, searchableText, secretsIn } from '../fixtures/histories/recording-secrets.js';
import { withSyncEnv } from './helpers/sync-env.js';

/**
 * Temporal records what a failed activity threw: its message, type, stack and causes, in the
 * history of the workflows above it. A CRM that echoes the request's credentials (a PHP debug
 * page printing the Authorization header, an error body quoting it) must not put them there, nor
 * in the failed run's record that `crmsync status` shows. The production workflows and
 * activities run on the shared dev server against a tiny server answering what the simulator
 * never would (it never echoes credentials); the worker has the recorder's fixed credentials, so
 * the history can be searched for them, whole, base64 in a Basic token, or their first characters.
 */
let crm: ReplayServer;
beforeAll(async () => {
  crm = await startReplayServer('/v2');
});
afterAll(async () => {
  await crm.close();
});

const token = Buffer.from(`${RECORDING_USERNAME}:${RECORDING_PASSWORD}`).toString('base64');

describe('a sync that fails on a CRM echoing the credentials', () => {
  it('keeps them out of the workflow histories, the sync error and the failed run record', { timeout: 120_000 }, async () => {
    await withSyncEnv({ sim: { contacts: 1 }, env: { CRM_BASE_URL: crm.baseUrl, CRM_USERNAME: RECORDING_USERNAME, CRM_PASSWORD: RECORDING_PASSWORD } }, async (env) => {
      const scenarios: [string, Parameters<ReplayServer['respond']>[0]][] = [
        [
          'a 2xx debug page',
          (req, res) => {
            res.writeHead(200, { 'content-type': 'text/html' });
            res.end(`<html><body>PHP_AUTH_PW=${RECORDING_PASSWORD} HTTP_AUTHORIZATION=${req.headers.authorization}</body></html>`);
          },
        ],
        [
          'a 401 quoting the header',
          (req, res) => {
            res.writeHead(401, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ code: 'rest_forbidden', message: `Bad credentials: ${req.headers.authorization} (${RECORDING_PASSWORD})` }));
          },
        ],
        [
          'a 422 naming a parameter with the header',
          (req, res) => {
            res.writeHead(422, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ code: 'rest_invalid_param', message: 'Invalid parameter(s): per_page', data: { params: { per_page: `not for ${req.headers.authorization}` } } }));
          },
        ],
      ];
      for (const [name, respond] of scenarios) {
        crm.respond(respond);
        const failure = await env.sync({ streams: ['tags'] }).then(
          () => new Error(`${name}: the sync succeeded`),
          (e: unknown) => e as Error,
        );
        expect(failure.message, name).toMatch(/tags/);
        const seen: string[] = [String(failure), String((failure as { cause?: unknown }).cause ?? '')];
        for (const id of [syncWorkflowId(env.queues.main), streamWorkflowId('tags', env.queues.main)]) {
          const json = historyToJSON(await env.client.workflow.getHandle(id).fetchHistory());
          expect(json, `${name}: ${id} failed`).toMatch(/Failed/);
          expect(secretsIn(json), `${name}: ${id}`).toEqual([]);
          seen.push(searchableText(json));
        }
        const runs = await env.read((w) => w.query(`SELECT error FROM _sync_runs WHERE stream = 'tags' AND status = 'failed'`));
        expect(runs.length, name).toBeGreaterThan(0);
        seen.push(JSON.stringify(runs));
        const text = seen.join('\n');
        for (const secret of [RECORDING_PASSWORD.slice(0, 8), token.slice(0, 12)]) expect(text, name).not.toContain(secret);
      }
    });
  });
});
