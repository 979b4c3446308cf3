import { describe, expect, it } from 'vitest';
import { slugify, TaxonomyIndex } from '../../src/push/taxonomy-index.js';

describe('TaxonomyIndex', () => {
  const index = new TaxonomyIndex('tag', [
    { id: 1, title: 'VIP', slug: 'vip' },
    { id: 2, title: 'Newsletter Reader', slug: 'newsletter-reader' },
    { id: 3, title: 'Spring-Promo', slug: 'spring-promo' },
  ]);

  it('resolves ids, titles and slugs case-insensitively, sorted and without duplicates', () => {
    expect(index.resolve([2, 'vip', 'NEWSLETTER-READER', 'Newsletter Reader'])).toEqual({ ids: [1, 2] });
  });

  it('finds a title written differently through the slug the CRM would derive', () => {
    expect(index.resolve(['Spring Promo'])).toEqual({ ids: [3] });
    expect(slugify('  Événement 2027 / Q1 ')).toBe('événement-2027-q1');
  });

  it('reports unknown ids and every missing name', () => {
    expect(index.resolve([1, 99])).toEqual({ unknownId: 99 });
    expect(index.resolve(['vip', 'Gold', 'Silver'])).toEqual({ missing: ['Gold', 'Silver'] });
  });
});
