import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { isSpecError, withSim, type Api, type Json } from './helpers.js';

// Statements of the written interface (../shared/spec/crm-rest-api.md) that spec mode had let
// slip: a note's created_at is required on write; /reports/campaigns takes start_date and
// end_date, and an end before the start is 400 invalid_date_range; an unknown contact id in a
// path is 404 rest_post_invalid_id; PUT /sequences/{id} takes settings.mailer_settings, which are
// propagated to the sequence's emails.

const DAY = 86_400_000;
const ymd = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

describe('spec mode: note created_at, campaign report dates, unknown contact, sequence mailer', () => {
  let sim: RunningSimulator;
  let call: Api;
  let contact: number;

  beforeAll(async () => {
    ({ sim, call } = await withSim({ contacts: 20, seed: 5 }));
    contact = sim.truth().contacts[0]!.id;
  });
  afterAll(async () => {
    await sim?.close();
  });

  it('a note written without created_at, or with one that is no timestamp, is a 400; with one it is kept', async () => {
    const note = { title: 'Call', description: '<p>hi</p>', type: 'call' };
    const missing = await call('POST', `/subscribers/${contact}/notes`, { note });
    expect([missing.status, isSpecError(missing.json, 400, 'rest_missing_callback_param'), missing.json.message]).toEqual([400, true, expect.stringContaining('created_at')]);
    const bad = await call('POST', `/subscribers/${contact}/notes`, { note: { ...note, created_at: 'yesterday-ish' } });
    expect([bad.status, isSpecError(bad.json, 400, 'rest_invalid_param')]).toEqual([400, true]);
    const added = await call('POST', `/subscribers/${contact}/notes`, { note: { ...note, created_at: '2026-01-31 14:05:00' } });
    expect(added.status).toBe(200);
    expect(added.json.note.created_at).toBe('2026-01-31 14:05:00');
    const put = await call('PUT', `/subscribers/${contact}/notes/${added.json.note.id}`, { note: { ...note, title: 'Call 2' } });
    expect([put.status, isSpecError(put.json, 400, 'rest_missing_callback_param')]).toEqual([400, true]);
    expect(
      sim
        .truth()
        .notes.filter((n) => n.subscriberId === contact)
        .map((n) => n.title),
    ).toEqual(['Call']);
  });

  it('/reports/campaigns bounds the campaigns by creation day, and refuses an end before the start', async () => {
    const campaigns = sim.truth().campaigns as { id: number; createdAt: number }[];
    const all = (await call('GET', '/reports/campaigns')).json.campaigns as Json[];
    expect(all.map((c) => c.id).sort()).toEqual(campaigns.map((c) => c.id).sort());
    const first = Math.min(...campaigns.map((c) => c.createdAt));
    const day = ymd(first);
    const sameDay = campaigns.filter((c) => ymd(c.createdAt) === day).map((c) => c.id);
    const bounded = (await call('GET', `/reports/campaigns?start_date=${day}&end_date=${day}`)).json.campaigns as Json[];
    expect(bounded.map((c) => c.id).sort()).toEqual(sameDay.sort());
    const later = (await call('GET', `/reports/campaigns?start_date=${ymd(first + DAY)}`)).json.campaigns as Json[];
    expect(later.map((c) => c.id).sort()).toEqual(
      campaigns
        .filter((c) => ymd(c.createdAt) > day)
        .map((c) => c.id)
        .sort(),
    );
    const reversed = await call('GET', `/reports/campaigns?start_date=${ymd(first + DAY)}&end_date=${day}`);
    expect([reversed.status, isSpecError(reversed.json, 400, 'invalid_date_range')]).toEqual([400, true]);
    const malformed = await call('GET', '/reports/campaigns?start_date=31/01/2026');
    expect([malformed.status, isSpecError(malformed.json, 400, 'rest_invalid_param')]).toEqual([400, true]);
  });

  it('a contact’s sequences: 404 for an unknown contact, as on its other routes', async () => {
    const unknown = await call('GET', '/sequences/subscriber/999999/sequences');
    expect([unknown.status, isSpecError(unknown.json, 404, 'rest_post_invalid_id')]).toEqual([404, true]);
    expect((await call('GET', `/sequences/subscriber/${contact}/sequences`)).status).toBe(200);
  });

  it('PUT /sequences/{id} keeps the mailer settings it is sent, shows them on the sequence and its emails', async () => {
    const seq = (await call('GET', '/sequences')).json.sequences.data[0] as Json;
    const read = async (sid: number) => (await call('GET', `/sequences/${sid}?with[]=sequence_emails`)).json;
    expect((await read(seq.id)).sequence.settings.mailer_settings).toEqual({ from_name: '', from_email: '', reply_to_name: '', reply_to_email: '', is_custom: 'no' });
    const mailer = { from_name: 'Support', from_email: 'support@example.test', reply_to_name: 'Help', reply_to_email: 'help@example.test', is_custom: 'yes' };
    const put = await call('PUT', `/sequences/${seq.id}`, { settings: { mailer_settings: mailer } });
    expect([put.status, put.json.sequence.settings.mailer_settings]).toEqual([200, mailer]);
    const after = await read(seq.id);
    expect(after.sequence.settings.mailer_settings).toEqual(mailer);
    expect(after.sequence_emails.length).toBeGreaterThan(0);
    for (const e of after.sequence_emails as Json[]) expect(e.settings.mailer_settings).toEqual(mailer);
    // Fields not sent keep their value; one that is not a string is refused and changes nothing.
    await call('PUT', `/sequences/${seq.id}`, { settings: { mailer_settings: { from_name: 'Sales' } } });
    expect((await read(seq.id)).sequence.settings.mailer_settings).toEqual({ ...mailer, from_name: 'Sales' });
    const bad = await call('PUT', `/sequences/${seq.id}`, { title: 'Renamed', settings: { mailer_settings: { from_email: 42 } } });
    expect([bad.status, isSpecError(bad.json, 400, 'rest_invalid_param')]).toEqual([400, true]);
    expect((await read(seq.id)).sequence).toMatchObject({ title: seq.title, settings: { mailer_settings: { ...mailer, from_name: 'Sales' } } });
  });
});
