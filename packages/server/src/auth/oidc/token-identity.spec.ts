import { describe, expect, it } from '@jest/globals';
import {
  claimAt,
  displayNameFromClaims,
  grantsFromClaims,
  TOKEN_FAILURE_DESCRIPTIONS,
  TOKEN_FAILURE_REASONS,
  TokenRejectedError,
} from './token-identity.js';
import type { RoleMap } from '../../config/oidc.settings.js';

const roleMap: RoleMap = new Map([
  ['acme-viewers', [{ namespace: 'acme', role: 'viewer' }]],
  ['acme-admins', [{ namespace: 'acme', role: 'admin' }]],
  [
    'platform',
    [
      { namespace: 'acme/platform', role: 'owner' },
      { namespace: 'acme', role: 'member' },
    ],
  ],
  ['auditors', [{ namespace: '*', role: 'viewer' }]],
]);

describe('claimAt', () => {
  it('reads a plain claim, a dotted path, and a claim whose name contains dots', () => {
    const claims = {
      groups: ['a'],
      realm_access: { roles: ['r'] },
      'https://acme.example/groups': ['n'],
    };
    expect(claimAt(claims, 'groups')).toEqual(['a']);
    expect(claimAt(claims, 'realm_access.roles')).toEqual(['r']);
    expect(claimAt(claims, 'https://acme.example/groups')).toEqual(['n']);
    expect(claimAt(claims, 'realm_access.missing')).toBeUndefined();
    expect(claimAt(claims, 'groups.length')).toBeUndefined();
  });

  it('never walks into the prototype', () => {
    expect(claimAt({}, 'constructor')).toBeUndefined();
    expect(claimAt({ a: {} }, 'a.__proto__')).toBeUndefined();
    expect(claimAt({ a: {} }, 'a.constructor.name')).toBeUndefined();
  });
});

describe('grantsFromClaims', () => {
  it('maps each claim value through the role map', () => {
    const grants = grantsFromClaims({ groups: ['acme-viewers', 'auditors', 'unmapped'] }, 'groups', roleMap);
    expect(Object.fromEntries(grants)).toEqual({ acme: 'viewer', '*': 'viewer' });
  });

  it('keeps the strongest role per namespace, whatever the order', () => {
    for (const groups of [
      ['acme-viewers', 'acme-admins', 'platform'],
      ['platform', 'acme-admins', 'acme-viewers'],
    ]) {
      const grants = grantsFromClaims({ groups }, 'groups', roleMap);
      expect(Object.fromEntries(grants)).toEqual({ acme: 'admin', 'acme/platform': 'owner' });
    }
  });

  it('accepts a single string and a nested path', () => {
    expect(Object.fromEntries(grantsFromClaims({ groups: 'acme-admins' }, 'groups', roleMap))).toEqual({
      acme: 'admin',
    });
    const keycloak = { realm_access: { roles: ['platform', 'offline_access'] } };
    expect(Object.fromEntries(grantsFromClaims(keycloak, 'realm_access.roles', roleMap))).toEqual({
      'acme/platform': 'owner',
      acme: 'member',
    });
  });

  it('grants nothing for a missing, empty or oddly typed claim, and ignores non-string entries', () => {
    expect(grantsFromClaims({}, 'groups', roleMap).size).toBe(0);
    expect(grantsFromClaims({ groups: [] }, 'groups', roleMap).size).toBe(0);
    expect(grantsFromClaims({ groups: { 'acme-admins': true } }, 'groups', roleMap).size).toBe(0);
    expect(grantsFromClaims({ groups: 42 }, 'groups', roleMap).size).toBe(0);
    expect(Object.fromEntries(grantsFromClaims({ groups: [1, null, 'acme-viewers'] }, 'groups', roleMap))).toEqual({
      acme: 'viewer',
    });
  });

  it('does not treat prototype names as role-map keys', () => {
    expect(grantsFromClaims({ groups: ['constructor', '__proto__', 'toString'] }, 'groups', roleMap).size).toBe(0);
  });
});

describe('displayNameFromClaims', () => {
  it('takes the first non-empty string claim, else the fallback', () => {
    const names = ['preferred_username', 'email'];
    expect(displayNameFromClaims({ preferred_username: 'ada', email: 'a@x' }, names, 's')).toBe('ada');
    expect(displayNameFromClaims({ preferred_username: ' ', email: 'a@x' }, names, 's')).toBe('a@x');
    expect(displayNameFromClaims({ preferred_username: 7 }, names, 's')).toBe('s');
  });
});

describe('TokenRejectedError', () => {
  it('has a fixed description for every reason', () => {
    for (const reason of TOKEN_FAILURE_REASONS) {
      const error = new TokenRejectedError(reason);
      expect(error.reason).toBe(reason);
      expect(error.description).toBe(TOKEN_FAILURE_DESCRIPTIONS[reason]);
      expect(error.description.length).toBeGreaterThan(0);
    }
  });
});
