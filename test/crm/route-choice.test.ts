import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createCrmClient, createRateLimiter, type CrmClient, ForbiddenError, NotFoundError } from '../../src/crm/index.js';
import { bodyText, fixtureNamed, loadFixtures } from './helpers/fixtures.js';
import { routedReplay } from './helpers/plugin-routes.js';
import { type ReplayServer, startReplayServer } from './helpers/replay-server.js';

/**
 * Operations that the written interface and fluentcrm-2.9 put on different routes: against the
 * plugin's captured route index the client must reach the plugin's route, against a CRM with only
 * the interface's route that one, and after a first answer go straight to the route that answered.
 */
const fixtures = loadFixtures();
const PREFIX = '/wp-json/fluent-crm/v2';
const capture = (file: string) => fixtureNamed(fixtures, file);
const noRoute = capture('PATCH_subscribers_id.json');

describe('routes the interface and the plugin disagree on', () => {
  let server: ReplayServer;
  let client: CrmClient;
  const seen = () => server.requests.map((r) => `${r.method} ${new URL(r.url, 'http://x').pathname.slice(PREFIX.length)}`);

  beforeAll(async () => {
    server = await startReplayServer(PREFIX);
  });
  afterEach(async () => {
    await client?.close();
  });
  afterAll(async () => {
    await server.close();
  });

  function freshClient(): CrmClient {
    server.requests.length = 0;
    client = createCrmClient({
      baseUrl: server.baseUrl,
      username: 'fixture-user',
      password: 'fixture-password-1234',
      limiter: createRateLimiter({ maxRps: 100_000, maxConcurrency: 2 }),
      retry: { maxRetries: 0 },
    });
    return client;
  }

  it('companies.attachSubscribers: the plugin has the route on POST only, and answers as captured', async () => {
    const c = freshClient();
    const attached = capture('POST_companies_attach-subscribers.json');
    server.respond(routedReplay(fixtures, PREFIX, () => attached));
    const res = await c.companies.attachSubscribers({ subscriberIds: [1, 2, 3, 4, 5], companyIds: [1] });
    expect(res).toEqual(attached.body);
    expect(seen()).toEqual(['POST /companies/attach-subscribers']);
    expect(JSON.parse(server.requests[0]!.body)).toEqual(attached.request.body);
    await c.companies.attachSubscribers({ subscriberIds: [6], companyIds: [1] });
    expect(seen()).toEqual(['POST /companies/attach-subscribers', 'POST /companies/attach-subscribers']);
  });

  it('companies.attachSubscribers: a CRM with only the interface PUT gets POST (404 rest_no_route), then PUT, and from then on PUT', async () => {
    const c = freshClient();
    server.respond((req, res) => {
      const put = req.method === 'PUT' && req.url.endsWith('/companies/attach-subscribers');
      res.writeHead(put ? 200 : 404, { 'content-type': 'application/json; charset=UTF-8' });
      res.end(put ? JSON.stringify({ message: 'Contacts have been attached to the companies', updated_count: 1 }) : bodyText(noRoute));
    });
    expect(await c.companies.attachSubscribers({ subscriberIds: [1], companyIds: [2] })).toMatchObject({ updated_count: 1 });
    expect(seen()).toEqual(['POST /companies/attach-subscribers', 'PUT /companies/attach-subscribers']);
    expect(server.requests.map((r) => JSON.parse(r.body) as unknown)).toEqual([
      { subscriber_ids: [1], company_ids: [2] },
      { subscriber_ids: [1], company_ids: [2] },
    ]);
    // A view for a signal shares what the client learned.
    await c.withSignal(new AbortController().signal).companies.attachSubscribers({ subscriberIds: [3], companyIds: [2] });
    expect(seen().slice(2)).toEqual(['PUT /companies/attach-subscribers']);
  });

  it('companies.attachSubscribers: any answer but rest_no_route is the answer (the company module off: 403, no PUT)', async () => {
    const c = freshClient();
    const off = capture('GET_companies_module_disabled.json');
    server.respond({ status: off.status, body: bodyText(off) });
    await expect(c.companies.attachSubscribers({ subscriberIds: [1], companyIds: [1] })).rejects.toBeInstanceOf(ForbiddenError);
    expect(seen()).toEqual(['POST /companies/attach-subscribers']);
  });

  it('funnels.setStatus and removeSubscriber: the plugin lacks the interface routes; its own get the status and the contact id', async () => {
    const c = freshClient();
    // The plugin's answers to these two are not captured: a message, as its other writes answer.
    const done = { ...capture('DELETE_subscribers_id.json'), body: { message: 'done' } };
    server.respond(routedReplay(fixtures, PREFIX, () => done));
    expect(await c.funnels.setStatus(7, 'paused')).toEqual({ message: 'done' });
    await c.funnels.setStatus(7, 'published');
    expect(seen()).toEqual(['PUT /funnels/7/status', 'PUT /funnels/7', 'PUT /funnels/7']);
    expect(server.requests.slice(1).map((r) => JSON.parse(r.body) as unknown)).toEqual([{ status: 'paused' }, { status: 'published' }]);

    server.requests.length = 0;
    await c.funnels.removeSubscriber(1, 5);
    await c.funnels.removeSubscriber(1, 6);
    expect(server.requests.map((r) => `${r.method} ${decodeURIComponent(r.url.slice(PREFIX.length))}`)).toEqual([
      'DELETE /funnels/1/subscribers/5',
      'DELETE /funnels/1/subscribers?subscriber_ids[]=5',
      'DELETE /funnels/1/subscribers?subscriber_ids[]=6',
    ]);
  });

  it('funnels.setStatus and removeSubscriber on a CRM with the interface routes: one request each', async () => {
    const c = freshClient();
    server.respond({ status: 200, body: JSON.stringify({ message: 'ok' }) });
    await c.funnels.setStatus(7, 'draft');
    await c.funnels.removeSubscriber(1, 5);
    expect(seen()).toEqual(['PUT /funnels/7/status', 'DELETE /funnels/1/subscribers/5']);
  });

  it('a CRM with neither route: NotFoundError with routeMissing, naming both', async () => {
    const c = freshClient();
    server.respond({ status: noRoute.status, body: bodyText(noRoute) });
    const err = await c.companies.attachSubscribers({ subscriberIds: [1], companyIds: [1] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err).toMatchObject({ routeMissing: true, statusCode: 404 });
    expect((err as Error).message).toContain('POST /companies/attach-subscribers nor PUT /companies/attach-subscribers');
    expect(seen()).toEqual(['POST /companies/attach-subscribers', 'PUT /companies/attach-subscribers']);
  });
});
