import { describe, expect, it } from '@jest/globals';
import { violationsOf } from '../wire.js';
import { CreateApiKeyParams, ListApiKeysParams, RevokeApiKeyParams } from './auth.js';

const KEY = { name: 'ci', role: 'viewer' } as const;

function fieldsOf(schema: { safeParse(value: unknown): { success: boolean; error?: unknown } }, value: unknown) {
  const parsed = schema.safeParse(value);
  return parsed.success ? [] : violationsOf(parsed.error as never).map((v) => v.field);
}

describe('auth/apikey params', () => {
  // ISO 8601 as validator.js's grammar reads it (what @IsISO8601({ strict: true }) took), that names an instant.
  it.each([
    '2030-01-31T00:00:00Z',
    '2030-01-31T10:00:00.123+05:30',
    '2030-01-31',
    '2030',
    '2030-01',
    '2028-02-29',
    '2000-02-29',
    '2030-01-31 10:00',
    '2030-01-31T24:00',
    '+2030-01-31',
  ])('expiresAt %j is ISO 8601', (expiresAt) => {
    expect(fieldsOf(CreateApiKeyParams, { ...KEY, expiresAt })).toEqual([]);
  });

  // ISO 8601, but not an instant the server reads (basic format, week and ordinal dates, a decimal comma): before,
  // the API key service refused them after the params check, and audit/list answered -32603.
  it.each(['20300131', '2030-W05-3', '2030-032', '2028-366', '2030-01-31T10:00:00,5Z'])(
    'expiresAt %j is ISO 8601 but names no instant the server reads',
    (expiresAt) => {
      expect(fieldsOf(CreateApiKeyParams, { ...KEY, expiresAt })).toEqual(['expiresAt']);
    },
  );

  it.each([
    'tomorrow',
    '',
    ' 2030-01-31',
    '2030-1-31',
    '2030-0131',
    '203001',
    '2030-01-32',
    '2030-02-29',
    '2100-02-29',
    '2030-04-31',
    '2030-13-01',
    '2027-366',
    '2030-01-31T10:00:60Z',
    '2030-01-31T10:00Z\n',
    5,
    true,
  ])('expiresAt %j is not', (expiresAt) => {
    const parsed = CreateApiKeyParams.safeParse({ ...KEY, expiresAt });
    expect(parsed.success ? [] : violationsOf(parsed.error)).toEqual([
      { field: 'expiresAt', description: 'expiresAt must be an ISO 8601 instant such as 2030-01-31T00:00:00Z' },
    ]);
  });

  it('takes null for an optional param as absent, as @IsOptional() did', () => {
    expect(CreateApiKeyParams.parse({ ...KEY, expiresAt: null })).toEqual({ ...KEY, expiresAt: null });
    expect(fieldsOf(ListApiKeysParams, { includeRevoked: null, pageSize: null, pageToken: null })).toEqual([]);
    expect(fieldsOf(CreateApiKeyParams, { name: null, role: null })).toEqual(['name', 'role']);
  });

  it('names each bad or unknown field', () => {
    expect(fieldsOf(CreateApiKeyParams, { name: '-x', role: 'root', colour: 'red', size: 1 })).toEqual([
      'name',
      'role',
      'colour',
      'size',
    ]);
    expect(fieldsOf(ListApiKeysParams, { includeRevoked: 'true', pageSize: 101 })).toEqual([
      'pageSize',
      'includeRevoked',
    ]);
    expect(fieldsOf(RevokeApiKeyParams, { id: '01ARZ3NDEKTSV4RRFFQ69G5FAV' })).toEqual([]);
    expect(fieldsOf(RevokeApiKeyParams, { id: '01arz3ndektsv4rrffq69g5fav' })).toEqual([]);
    expect(fieldsOf(RevokeApiKeyParams, { id: 'IIIIIIIIIIIIIIIIIIIIIIIIII' })).toEqual(['id']);
    expect(fieldsOf(RevokeApiKeyParams, {})).toEqual(['id']);
  });
});
