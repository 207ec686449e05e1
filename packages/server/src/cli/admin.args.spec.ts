import { describe, expect, it } from '@jest/globals';
import { ConfigurationError } from '../config/app.config.js';
import {
  BusinessRuleViolation,
  DuplicateEntityError,
  ResourceNotFoundError,
  ValidationError,
} from '../common/domain.errors.js';
import { DataDirLockedError, PendingMigrationsError } from '../database/database.errors.js';
import { helpText, parseAdminArgs, usageText } from './admin.args.js';
import {
  DatabaseUnavailableError,
  ExitCode,
  exitCodeOf,
  InvalidStateError,
  messageOf,
  UsageError,
} from './admin.exit-codes.js';

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
    expect(parseAdminArgs(['namespace', 'members', 'list', 'acme', '--json'])).toEqual({
      kind: 'namespace.members.list',
      namespace: 'acme',
      json: true,
    });
    expect(parseAdminArgs(['namespace', 'members', 'set', 'acme', '--subject', 'oidc:alice', '--role=owner'])).toEqual({
      kind: 'namespace.members.set',
      namespace: 'acme',
      subject: 'oidc:alice',
      role: 'owner',
    });
    expect(parseAdminArgs(['namespace', 'members', 'remove', '--subject', 'apikey:01ARZ3', 'acme/web'])).toEqual({
      kind: 'namespace.members.remove',
      namespace: 'acme/web',
      subject: 'apikey:01ARZ3',
    });
  });

  it('answers --help at every level, before checking anything else', () => {
    expect(parseAdminArgs(['--help'])).toEqual({ kind: 'help', command: [] });
    expect(parseAdminArgs(['help', 'apikey', 'create'])).toEqual({ kind: 'help', command: ['apikey', 'create'] });
    expect(parseAdminArgs(['apikey', '-h'])).toEqual({ kind: 'help', command: ['apikey'] });
    expect(parseAdminArgs(['apikey', 'create', '--help'])).toEqual({ kind: 'help', command: ['apikey', 'create'] });
    expect(parseAdminArgs(['help', 'apikey', 'create', 'extra'])).toEqual({
      kind: 'help',
      command: ['apikey', 'create'],
    });
    expect(parseAdminArgs(['namespace', 'members', '--help'])).toEqual({
      kind: 'help',
      command: ['namespace', 'members'],
    });
    expect(parseAdminArgs(['namespace', 'members', 'set', '-h', '--role', 'root'])).toEqual({
      kind: 'help',
      command: ['namespace', 'members', 'set'],
    });
    expect(parseAdminArgs(['help', 'namespace', 'members', 'remove'])).toEqual({
      kind: 'help',
      command: ['namespace', 'members', 'remove'],
    });
  });

  it("prints help for a subgroup and its commands, and lists them in its group's help", () => {
    expect(helpText(['namespace'])).toContain('cleveragents-admin namespace members set <slug> --subject S --role R');
    const members = helpText(['namespace', 'members']);
    expect(members).toMatch(/^Members of a namespace/);
    expect(members).toContain('cleveragents-admin namespace members list <slug> [--json]');
    expect(members).toContain('cleveragents-admin namespace members remove <slug> --subject S');
    expect(members).not.toContain('namespace create');
    expect(helpText(['namespace', 'members', 'set'])).toMatch(/^Usage: cleveragents-admin namespace members set /);
    expect(usageText(['namespace', 'members', 'remove'])).toContain(
      'Run `cleveragents-admin namespace members remove --help`',
    );
  });

  it.each([
    [[], /missing command/],
    [['apikey'], /needs a command/],
    [['apikey', 'rotate'], /unknown apikey command/],
    [['apikey', 'toString'], /unknown apikey command/],
    [['namespace', 'list', '--all'], /unknown option '--all'/],
    [['apikey', 'revoke'], /missing <id>/],
    [['apikey', 'list', 'extra'], /unexpected argument "extra"/],
    [['apikey', 'create', '--name', 'x'], /--role is required/],
    [['apikey', 'create', '--name', 'x', '--role', 'root'], /--role must be one of owner, admin, member, viewer/],
    [['apikey', 'create', '--name', 'x', '--role', 'admin', '--expires', '1700000000'], /--expires must be/],
    [['apikey', 'create', '--name', 'x', '--role', 'admin', '--expires', '2030-02-31'], /--expires must be/],
    [['namespace', 'members'], /namespace members needs a command: list, set, remove/],
    [['namespace', 'members', 'add'], /unknown namespace members command "add"; one of list, set, remove/],
    [['namespace', 'members', 'toString'], /unknown namespace members command/],
    [['namespace', 'frobnicate'], /one of create, list, members/],
    [['namespace', 'members', 'list'], /missing <slug>/],
    [['namespace', 'members', 'set', 'acme', '--role', 'owner'], /--subject is required/],
    [['namespace', 'members', 'set', 'acme', '--subject', 'oidc:alice'], /--role is required/],
    [['namespace', 'members', 'set', 'acme', '--subject', 'oidc:a', '--role', 'root'], /--role must be one of/],
    [['namespace', 'members', 'remove', 'acme'], /--subject is required/],
    [['namespace', 'members', 'remove', 'acme', '--subject', 'oidc:a', '--role', 'owner'], /unknown option '--role'/],
    [['namespace', 'members', 'list', 'acme', 'acme/web'], /unexpected argument "acme\/web"/],
    // An option left without its value does not swallow the next option as that value.
    [['apikey', 'create', '--name', '--role', 'admin'], /--name needs a value \(got the option --role\)/],
    [['apikey', 'create', '--name', 'x', '--role', '--namespace', 'acme'], /--role needs a value/],
    [['namespace', 'create', 'acme', '--display-name', '--description=d'], /--display-name needs a value/],
  ])('refuses %j', (argv, message) => {
    expect(() => parseAdminArgs(argv)).toThrow(UsageError);
    expect(() => parseAdminArgs(argv)).toThrow(message);
  });

  it('keeps a usage error on one line, a suggestion included, so that the usage follows it', () => {
    expect(() => parseAdminArgs(['apikey', 'list', '--jsn'])).toThrow(
      expect.objectContaining({ message: "unknown option '--jsn' (Did you mean --json?)" }),
    );
  });

  it('names the command a usage error is about, so that its usage follows', () => {
    expect(() => parseAdminArgs(['namespace', 'members', 'set', 'acme'])).toThrow(
      expect.objectContaining({ command: ['namespace', 'members', 'set'] }),
    );
    expect(() => parseAdminArgs(['namespace', 'members', 'add'])).toThrow(
      expect.objectContaining({ command: ['namespace', 'members'] }),
    );
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
    expect(exitCodeOf(new ResourceNotFoundError('x', 'MEMBER_NOT_FOUND'))).toBe(ExitCode.NotFound);
    expect(exitCodeOf(new BusinessRuleViolation('x', 'LAST_OWNER'))).toBe(ExitCode.Conflict);
    expect(exitCodeOf(new DuplicateEntityError('x'))).toBe(ExitCode.Conflict);
    expect(exitCodeOf(new BusinessRuleViolation('x', 'ALREADY_REVOKED'))).toBe(ExitCode.Conflict);
    expect(exitCodeOf(new InvalidStateError('x'))).toBe(ExitCode.Conflict);
    expect(exitCodeOf(new PendingMigrationsError(['A1']))).toBe(ExitCode.PendingMigrations);
    expect(exitCodeOf(new Error('boom'))).toBe(ExitCode.Failure);
  });

  it('names the CLI option in a validation message', () => {
    const error = new ValidationError([{ field: 'subject', description: 'subject must be "<scheme>:<id>"' }]);
    expect(messageOf(error)).toBe('invalid --subject: subject must be "<scheme>:<id>"');
  });
});
