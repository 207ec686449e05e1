import { describe, expect, it } from '@jest/globals';
import { visibilityFilter } from './namespace-visibility.js';

describe('visibilityFilter', () => {
  it('sees everything with a * grant', () => {
    expect(visibilityFilter(['acme', '*'])).toEqual({ sql: 'TRUE', values: [] });
  });

  it('sees nothing without a grant on a real namespace', () => {
    expect(visibilityFilter([])).toEqual({ sql: 'FALSE', values: [] });
    expect(visibilityFilter(['Not A Slug', 'x%'])).toEqual({ sql: 'FALSE', values: [] });
  });

  it('selects each granted namespace and the range of its descendants', () => {
    expect(visibilityFilter(['acme'])).toEqual({
      sql: '(slug = $1 OR (slug >= $2 AND slug < $3))',
      values: ['acme', 'acme/', 'acme0'],
    });
  });

  it('drops grants covered by an ancestor grant and numbers placeholders from firstParam', () => {
    const filter = visibilityFilter(['beta', 'acme/web', 'acme', 'acme/web/ui', 'acme-corp'], 3);
    expect(filter.values).toEqual([
      'acme',
      'acme/',
      'acme0',
      'acme-corp',
      'acme-corp/',
      'acme-corp0',
      'beta',
      'beta/',
      'beta0',
    ]);
    expect(filter.sql).toBe(
      '(slug = $3 OR (slug >= $4 AND slug < $5) OR slug = $6 OR (slug >= $7 AND slug < $8) OR slug = $9 OR (slug >= $10 AND slug < $11))',
    );
  });

  it('the descendant range holds exactly the descendants in bytewise order', () => {
    const [, low, high] = visibilityFilter(['acme']).values;
    const inRange = (slug: string) =>
      Buffer.compare(Buffer.from(slug), Buffer.from(low)) >= 0 &&
      Buffer.compare(Buffer.from(slug), Buffer.from(high)) < 0;
    expect(['acme/a', 'acme/z', 'acme/0', 'acme/a/b'].every(inRange)).toBe(true);
    expect(['acme', 'acme-x', 'acme0', 'acmex', 'acm', 'b'].some(inRange)).toBe(false);
  });
});
