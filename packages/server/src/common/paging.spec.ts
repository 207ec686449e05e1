import { describe, expect, it } from '@jest/globals';
import { decode, PageParams } from '@cleveragents/contract';
import { ValidationError } from './domain.errors.js';
import { decodePageToken, encodePageToken, pageOf, pageSizeOf } from './paging.js';

function violationOf(run: () => unknown): ValidationError {
  try {
    run();
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  throw new Error('expected a ValidationError');
}

describe('paging', () => {
  it('round-trips a position through an opaque token', () => {
    const token = encodePageToken('members', ['oidc:alice', '2030-01-01T00:00:00.000Z']);
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(token).not.toContain('alice');
    expect(decodePageToken('members', token, 2)).toEqual(['oidc:alice', '2030-01-01T00:00:00.000Z']);
  });

  it('reads no token, or an empty one, as the first page', () => {
    expect(decodePageToken('members', undefined, 1)).toBeUndefined();
    expect(decodePageToken('members', '', 1)).toBeUndefined();
    expect(decodePageToken('members', null, 1)).toBeUndefined();
  });

  it.each([
    ['garbage', 'not a token!'],
    ['valid base64 that is no JSON', Buffer.from('hello').toString('base64url')],
    ['another list', encodePageToken('namespaces', ['acme'])],
    ['the wrong arity', encodePageToken('members', ['a', 'b'])],
    ['a non-string position', Buffer.from(JSON.stringify(['members', 7])).toString('base64url')],
    ['a JSON object', Buffer.from(JSON.stringify({ list: 'members' })).toString('base64url')],
  ])('refuses %s as -32602 naming pageToken', (_what, token) => {
    const error = violationOf(() => decodePageToken('members', token, 1));
    expect(error.reason).toBe('INVALID_PAGE_TOKEN');
    expect(error.violations.map((v) => v.field)).toEqual(['pageToken']);
  });

  it('defaults and bounds the page size', () => {
    expect(pageSizeOf({})).toBe(50);
    expect(pageSizeOf({ pageSize: null })).toBe(50);
    expect(pageSizeOf({ pageSize: 1 })).toBe(1);
    expect(pageSizeOf({ pageSize: 100 })).toBe(100);
    for (const pageSize of [0, 101, 2.5, -1]) {
      expect(violationOf(() => pageSizeOf({ pageSize })).violations[0].field).toBe('pageSize');
    }
  });

  it("the contract's paging params check both fields; null is as if absent", () => {
    const fields = (plain: object) => {
      const decoded = decode(PageParams, plain);
      return decoded.ok ? [] : decoded.violations.map((violation) => violation.field);
    };
    expect(fields({})).toEqual([]);
    expect(fields({ pageSize: null, pageToken: null })).toEqual([]);
    expect(fields({ pageSize: 100, pageToken: 'abc' })).toEqual([]);
    expect(fields({ pageSize: 0 })).toEqual(['pageSize']);
    expect(fields({ pageSize: 101 })).toEqual(['pageSize']);
    expect(fields({ pageSize: '10' })).toEqual(['pageSize']);
    expect(fields({ pageToken: 5 })).toEqual(['pageToken']);
    expect(fields({ pageToken: 'x'.repeat(2001) })).toEqual(['pageToken']);
  });

  it('pages rows read with one extra: the extra says more follow, the last shown gives the token', () => {
    const rows = ['a', 'b', 'c'];
    const first = pageOf(
      rows,
      2,
      3,
      'letters',
      (row) => [row],
      (row) => row.toUpperCase(),
    );
    expect(first.items).toEqual(['A', 'B']);
    expect(first.totalSize).toBe(3);
    expect(decodePageToken('letters', first.nextPageToken, 1)).toEqual(['b']);
    const last = pageOf(
      ['c'],
      2,
      3,
      'letters',
      (row) => [row],
      (row) => row,
    );
    expect(last).toEqual({ items: ['c'], nextPageToken: '', totalSize: 3 });
  });
});
