import { describe, expect, it } from '@jest/globals';
import { ConfigurationError } from '../config/app.config.js';
import {
  BusinessRuleViolation,
  DuplicateEntityError,
  ResourceNotFoundError,
  ValidationError,
} from '../common/domain.errors.js';
import { DataDirLockedError, PendingMigrationsError } from '../database/database.errors.js';
import { parseAdminArgs } from './admin.args.js';
import { DatabaseUnavailableError, ExitCode, exitCodeOf, InvalidStateError, UsageError } from './admin.exit-codes.js';

describe('parseAdminArgs', () => {
  it('parses each command with its options', () => {
    expect(parseAdminArgs(['migrate', 'show', '--check', '--json'])).toEqual({
      kind: 'migrate.show',
      check: true,
      json: true,
    });
    expect(parseAdminArgs(['namespace', 'create', 'acme/web', '--display-name=Web'])).toEqual({
      kind: 'namespace.create',
      namespace: 'acme/web',
      displayName: 'Web',
      description: undefined,
    });
    expect(
      parseAdminArgs(['apikey', 'create', '--name', 'ci', '--role', 'viewer', '--expires', '2030-01-31T12:00:00Z']),
    ).toEqual({
      kind: 'apikey.create',
      name: 'ci',
      role: 'viewer',
      namespace: undefined,
      expiresAt: new Date('2030-01-31T12:00:00Z'),
    });
    expect(parseAdminArgs(['apikey', 'revoke', '01ARZ3NDEKTSV4RRFFQ69G5FAV', '--namespace', 'acme'])).toEqual({
      kind: 'apikey.revoke',
      id: '01ARZ3NDEKTSV4RRFFQ69G5FAV',
      namespace: 'acme',
    });
  });

  it('answers --help at every level, before checking anything else', () => {
    expect(parseAdminArgs(['--help'])).toEqual({ kind: 'help', command: [] });
    expect(parseAdminArgs(['help', 'apikey', 'create'])).toEqual({ kind: 'help', command: ['apikey', 'create'] });
    expect(parseAdminArgs(['apikey', '-h'])).toEqual({ kind: 'help', command: ['apikey'] });
    expect(parseAdminArgs(['apikey', 'create', '--help'])).toEqual({ kind: 'help', command: ['apikey', 'create'] });
  });

  it.each([
    [[], /missing command/],
    [['apikey'], /needs a command/],
    [['apikey', 'rotate'], /unknown apikey command/],
    [['apikey', 'toString'], /unknown apikey command/],
    [['namespace', 'list', '--all'], /Unknown option '--all'/],
    [['apikey', 'revoke'], /missing <id>/],
    [['apikey', 'list', 'extra'], /unexpected argument "extra"/],
    [['apikey', 'create', '--name', 'x'], /--role is required/],
    [['apikey', 'create', '--name', 'x', '--role', 'root'], /--role must be one of owner, admin, member, viewer/],
    [['apikey', 'create', '--name', 'x', '--role', 'admin', '--expires', '1700000000'], /--expires must be/],
    [['apikey', 'create', '--name', 'x', '--role', 'admin', '--expires', '2030-02-31'], /--expires must be/],
  ])('refuses %j', (argv, message) => {
    expect(() => parseAdminArgs(argv)).toThrow(UsageError);
    expect(() => parseAdminArgs(argv)).toThrow(message);
  });
});

describe('exitCodeOf', () => {
  it('maps every error the CLI can meet to its documented code', () => {
    expect(exitCodeOf(new UsageError('x'))).toBe(ExitCode.Usage);
    expect(exitCodeOf(new ConfigurationError([{ variable: 'PORT', problem: 'x' }]))).toBe(ExitCode.Usage);
    expect(exitCodeOf(new ValidationError([{ field: 'name', description: 'x' }]))).toBe(ExitCode.Usage);
    expect(exitCodeOf(new DataDirLockedError('/data', 'process 1'))).toBe(ExitCode.DatabaseUnavailable);
    expect(exitCodeOf(new DatabaseUnavailableError('db', new Error('x')))).toBe(ExitCode.DatabaseUnavailable);
    expect(exitCodeOf(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }))).toBe(
      ExitCode.DatabaseUnavailable,
    );
    expect(exitCodeOf(new ResourceNotFoundError('x', 'KEY_NOT_FOUND'))).toBe(ExitCode.NotFound);
    expect(exitCodeOf(new DuplicateEntityError('x'))).toBe(ExitCode.Conflict);
    expect(exitCodeOf(new BusinessRuleViolation('x', 'ALREADY_REVOKED'))).toBe(ExitCode.Conflict);
    expect(exitCodeOf(new InvalidStateError('x'))).toBe(ExitCode.Conflict);
    expect(exitCodeOf(new PendingMigrationsError(['A1']))).toBe(ExitCode.PendingMigrations);
    expect(exitCodeOf(new Error('boom'))).toBe(ExitCode.Failure);
  });
});
