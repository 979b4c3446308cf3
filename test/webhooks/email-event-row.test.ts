import { describe, expect, it } from 'vitest';
import { createTimestampNormalizer } from '../../src/crm/timestamps.js';
import { parseSpoolRecord } from '../../src/webhooks/event-payload.js';
import { emailEventRow } from '../../src/webhooks/event-rows.js';

function emailEvent(openedAt: string) {
  const body = JSON.stringify({
    event: 'email.opened',
    timestamp: '2026-12-06T15:40:17Z',
    webhook_id: 1,
    data: { email: { id: 7, subject: 'Hi', contact_id: 5, campaign_id: 2, opened_at: openedAt } },
  });
  return parseSpoolRecord({ deliveryId: 'd-1', webhookId: 1, event: 'email.opened', known: true, receivedAt: Date.parse('2026-12-06T15:40:18Z'), body: Buffer.from(body), seq: 1 });
}

describe('email_events rows', () => {
  it("reads a zone-less opened_at in the site's zone, as the CRM's other timestamps", () => {
    // St. John's is UTC-3:30: 12:10:17 there is 15:40:17Z.
    const siteTime = createTimestampNormalizer('America/St_Johns');
    expect(emailEventRow(emailEvent('2026-12-06 12:10:17'), siteTime).opened_at).toBe('2026-12-06T15:40:17.000Z');
    // A zoned value is kept as the instant it names.
    expect(emailEventRow(emailEvent('2026-12-06T15:40:17Z'), siteTime).opened_at).toBe('2026-12-06T15:40:17.000Z');
    expect(emailEventRow(emailEvent('not a time'), siteTime).opened_at).toBeNull();
  });
});
