import { describe, expect, it } from '@jest/globals';
import { violationsOf } from '../wire.js';
import { ListAuditParams } from './audit.js';

function fieldsOf(value: unknown): string[] {
  const parsed = ListAuditParams.safeParse(value);
  return parsed.success ? [] : violationsOf(parsed.error).map((v) => v.field);
}

describe('audit/list params', () => {
  it('takes since and until as ISO 8601 instants, a bare date too', () => {
    expect(fieldsOf({ namespace: 'acme', since: '2026-12-01', until: '2026-12-02T00:00:00Z' })).toEqual([]);
    expect(fieldsOf({ namespace: 'acme', since: '2026-12-01T10:00', until: '2026-12-02 10:00' })).toEqual([]);
    // ISO 8601 that names no instant the server reads (it answered -32603 when it tried).
    expect(fieldsOf({ namespace: 'acme', since: '2026-W48', until: '2026-032' })).toEqual(['since', 'until']);
    expect(fieldsOf({ namespace: 'acme', since: '2026-02-30', until: 'later' })).toEqual(['since', 'until']);
    const parsed = ListAuditParams.safeParse({ namespace: 'acme', until: 5 });
    expect(parsed.success ? [] : violationsOf(parsed.error)).toEqual([
      { field: 'until', description: 'until must be an ISO 8601 instant such as 2026-12-02T00:00:00Z' },
    ]);
  });

  it('takes null for an optional filter as absent, as @IsOptional() did', () => {
    const nulls = { action: null, actor: null, since: null, until: null, pageSize: null, pageToken: null };
    expect(fieldsOf({ namespace: 'acme', ...nulls })).toEqual([]);
    expect(fieldsOf({ namespace: null })).toEqual(['namespace']);
  });

  it('names each bad or unknown field', () => {
    expect(fieldsOf({ namespace: 'acme', action: 'apikey.create', actor: 'oidc:alice' })).toEqual([]);
    expect(fieldsOf({ namespace: 'Acme', action: 'create', actor: 'a'.repeat(301), pageSize: 0, colour: 1 })).toEqual([
      'pageSize',
      'namespace',
      'action',
      'actor',
      'colour',
    ]);
  });
});
