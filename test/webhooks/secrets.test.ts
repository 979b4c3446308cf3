import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Secret } from '../../src/secret.js';
import { createSecretResolver } from '../../src/webhooks/secret-resolver.js';
import { withTempDir } from './helpers.js';

describe('webhook secrets configuration', () => {
  it('refuses to start without any secret, or with a malformed or missing named file, naming the fix', async () => {
    await withTempDir(async (dir) => {
      expect(() => createSecretResolver({})).toThrow(/CRM_WEBHOOK_SECRET/);
      expect(() => createSecretResolver({ secretsFile: join(dir, 'absent.json'), fileRequired: true })).toThrow(/webhooks register/);
      const file = join(dir, 's.json');
      for (const [content, why] of [
        ['{not json', /not valid JSON/],
        ['{"abc": "long-enough-secret"}', /abc: Invalid key.*webhook id/],
        ['{"1": ["aaaaaaaaaa", "bbbbbbbbbb", "cccccccccc"]}', /at most two/],
        ['{"1": "short"}', /at least 8/],
        ['[]', /invalid/],
      ] as const) {
        writeFileSync(file, content);
        expect(() => createSecretResolver({ secretsFile: file }), content).toThrow(why);
      }
    });
  });

  it('keeps the last good secrets when the file is broken while running, and never prints them', async () => {
    await withTempDir(async (dir) => {
      const file = join(dir, 's.json');
      writeFileSync(file, JSON.stringify({ 7: ['current-secret-value', 'previous-secret-value'] }));
      let clock = 0;
      const r = createSecretResolver({ secretsFile: file, secret: new Secret('catch-all-secret-value'), reloadIntervalMs: 10, now: () => clock });
      expect(r.secretsFor(7).map((s) => s.reveal())).toEqual(['current-secret-value', 'previous-secret-value']);
      expect(r.secretsFor(8).map((s) => s.reveal())).toEqual(['catch-all-secret-value']);
      writeFileSync(file, '{"7": [');
      clock += 20;
      expect(r.secretsFor(7).map((s) => s.reveal())).toEqual(['current-secret-value', 'previous-secret-value']);
      expect(JSON.stringify(r.secretsFor(7))).not.toContain('current-secret-value');
      expect(JSON.stringify(r.describe())).toBe('{"fileWebhooks":1,"catchAll":true}');
    });
  });
});
