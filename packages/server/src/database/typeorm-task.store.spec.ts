import { describe, expect, it } from '@jest/globals';
import { TaskState } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { Principal } from '../common/principal.js';
import { resolveStoreScope } from './store-scope.js';
import { decodePageToken, encodePageToken, taskCountQuery, taskPageQuery } from './task-list.query.js';

const scope = { namespace: 'acme/platform', owner: 'alice' };
const noFilter = {
  tenant: '',
  contextId: '',
  status: TaskState.TASK_STATE_UNSPECIFIED,
  pageToken: '',
  statusTimestampAfter: undefined,
};

describe('page tokens', () => {
  it('round-trip a cursor, an id holding the separator included', () => {
    for (const [timestamp, id] of [
      ['2030-01-01T00:00:00.000001Z', 'task-1'],
      ['-infinity', 'a|b|c'],
      ['2030-12-31T23:59:59.999999Z', 'ünïcödé'],
    ]) {
      expect(decodePageToken(encodePageToken(timestamp, id))).toEqual({ timestamp, id });
    }
  });

  it('use the SDK in-memory store shape: base64 of "<timestamp>|<id>"', () => {
    expect(Buffer.from(encodePageToken('2030-01-01T00:00:00.000000Z', 'x'), 'base64').toString()).toBe(
      '2030-01-01T00:00:00.000000Z|x',
    );
  });

  it('refuse anything that is not a cursor', () => {
    for (const token of [
      'garbage',
      Buffer.from('no separator').toString('base64'),
      Buffer.from("'; DROP TABLE tasks|x").toString('base64'),
      Buffer.from('2030-02-30T00:00:00.000000Z|x').toString('base64'),
      Buffer.from('2030-01-01T00:00:00Z|x').toString('base64'),
    ]) {
      expect(() => decodePageToken(token)).toThrow(RequestMalformedError);
    }
  });
});

describe('list queries', () => {
  it('bind every value as a parameter', () => {
    const params = {
      ...noFilter,
      contextId: "ctx'1",
      status: TaskState.TASK_STATE_COMPLETED,
      statusTimestampAfter: '2030-01-01T00:00:00Z',
      pageToken: encodePageToken('2030-01-02T00:00:00.000000Z', "id'x"),
    };
    const page = taskPageQuery(scope, params, 51);
    expect(page.sql).not.toContain("ctx'1");
    expect(page.values).toEqual([
      'acme/platform',
      'alice',
      "ctx'1",
      'TASK_STATE_COMPLETED',
      '2030-01-01T00:00:00Z',
      '2030-01-02T00:00:00.000000Z',
      "id'x",
      51,
    ]);
    expect(taskCountQuery(scope, params).values).toEqual(page.values.slice(0, 5));
  });

  it('pass a UTC status time through with its microseconds', () => {
    expect(taskCountQuery(scope, { ...noFilter, statusTimestampAfter: '2030-01-01T00:00:00.123456Z' }).values[2]).toBe(
      '2030-01-01T00:00:00.123456Z',
    );
  });

  it('normalise a status time that PostgreSQL might read differently, and refuse one nobody can read', () => {
    expect(taskCountQuery(scope, { ...noFilter, statusTimestampAfter: '2030-02-30T00:00:00Z' }).values[2]).toBe(
      '2030-03-02T00:00:00.000Z',
    );
    expect(taskCountQuery(scope, { ...noFilter, statusTimestampAfter: '2030-01-01T01:00:00+01:00' }).values[2]).toBe(
      '2030-01-01T00:00:00.000Z',
    );
    expect(
      taskCountQuery(scope, { ...noFilter, statusTimestampAfter: 'Tue, 01 Jan 2030 00:00:00 GMT' }).values[2],
    ).toBe('2030-01-01T00:00:00.000Z');
    expect(() => taskCountQuery(scope, { ...noFilter, statusTimestampAfter: 'soon' })).toThrow(RequestMalformedError);
  });

  it('take totalSize from the counters unless a context or time filter needs the rows counted', () => {
    expect(taskCountQuery(scope, noFilter).sql).toContain('FROM task_counts');
    expect(taskCountQuery(scope, { ...noFilter, status: TaskState.TASK_STATE_WORKING }).sql).toContain(
      'FROM task_counts',
    );
    expect(taskCountQuery(scope, { ...noFilter, contextId: 'c' }).sql).toContain('FROM tasks');
    expect(taskCountQuery(scope, { ...noFilter, statusTimestampAfter: '2030-01-01T00:00:00Z' }).sql).toContain(
      'FROM tasks',
    );
  });

  it('leave artifacts in the database unless asked for', () => {
    expect(taskPageQuery(scope, noFilter, 10).sql).toContain("task - 'artifacts'");
    expect(taskPageQuery(scope, { ...noFilter, includeArtifacts: true }, 10).sql).not.toContain("task - 'artifacts'");
  });
});

describe('resolveStoreScope', () => {
  it('takes the namespace from the tenant, else the principal default, else the configured default', () => {
    const alice = new Principal({ subject: 'alice', scheme: 'none', defaultNamespace: 'acme', grants: new Map() });
    expect(resolveStoreScope(new ServerCallContext({ user: alice, tenant: 'acme/platform' }), 'default')).toEqual({
      namespace: 'acme/platform',
      owner: 'alice',
    });
    expect(resolveStoreScope(new ServerCallContext({ user: alice }), 'default')).toEqual({
      namespace: 'acme',
      owner: 'alice',
    });
    expect(resolveStoreScope(new ServerCallContext({}), 'default')).toEqual({
      namespace: 'default',
      owner: 'anonymous',
    });
  });
});
