import { describe, expect, it } from '@jest/globals';
import { violationsOf } from '../wire.js';
import { NamespaceUsageParams } from './namespace.js';

function fieldsOf(value: unknown): string[] {
  const parsed = NamespaceUsageParams.safeParse(value);
  return parsed.success ? [] : violationsOf(parsed.error).map((v) => v.field);
}

describe('namespace/usage params', () => {
  it('takes a namespace, an ISO 8601 window and includeChildren; null for an optional one is as if absent', () => {
    expect(fieldsOf({ namespace: 'acme/platform' })).toEqual([]);
    expect(
      fieldsOf({ namespace: 'acme', since: '2026-12-01', until: '2026-12-02T00:00:00Z', includeChildren: true }),
    ).toEqual([]);
    expect(fieldsOf({ namespace: 'acme', since: null, until: null, includeChildren: null })).toEqual([]);
  });

  it('names each bad or unknown field', () => {
    expect(fieldsOf({})).toEqual(['namespace']);
    expect(
      fieldsOf({ namespace: 'acme', since: '2026-W48', until: 'later', includeChildren: 'yes', colour: 1 }),
    ).toEqual(['since', 'until', 'includeChildren', 'colour']);
    const parsed = NamespaceUsageParams.safeParse({ namespace: 'acme', since: 5 });
    expect(parsed.success ? [] : violationsOf(parsed.error)).toEqual([
      { field: 'since', description: 'since must be an ISO 8601 instant such as 2026-12-01T00:00:00Z' },
    ]);
  });
});
