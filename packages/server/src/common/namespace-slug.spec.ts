import { describe, expect, it } from '@jest/globals';
import { decode, NamespaceParam } from '@cleveragents/contract';
import { isNamespaceSlug, leafOf, lineageOf, parentOf } from './namespace-slug.js';

describe('namespace slugs', () => {
  it.each(['default', 'acme', 'acme/platform', 'a/b/c', 'x1', 'my-team/web-2', '0'])('accepts %p', (slug) => {
    expect(isNamespaceSlug(slug)).toBe(true);
  });

  it.each([
    '',
    'Acme',
    'acme/',
    '/acme',
    'acme//web',
    '-acme',
    'acme-',
    'ac--me',
    'ac_me',
    'acme web',
    'acme/Platform',
    '*',
    'ünï',
    'a'.repeat(201),
    42,
    null,
  ])('refuses %p', (slug) => {
    expect(isNamespaceSlug(slug)).toBe(false);
  });

  it('allows exactly 200 characters', () => {
    expect(isNamespaceSlug('a'.repeat(200))).toBe(true);
    expect(isNamespaceSlug(`${'a'.repeat(99)}/${'b'.repeat(100)}`)).toBe(true);
  });

  it('knows parents, lineage and leaves', () => {
    expect(parentOf('acme')).toBeUndefined();
    expect(parentOf('acme/platform')).toBe('acme');
    expect(parentOf('acme/platform/web')).toBe('acme/platform');
    expect(lineageOf('acme/platform/web')).toEqual(['acme', 'acme/platform', 'acme/platform/web']);
    expect(lineageOf('default')).toEqual(['default']);
    expect(leafOf('acme/platform')).toBe('platform');
    expect(leafOf('acme')).toBe('acme');
  });

  it("agrees with the contract's schema, whose violation names the field and the rule", () => {
    const bad = decode(NamespaceParam, { namespace: 'Acme/' });
    expect(bad).toEqual({
      ok: false,
      violations: [{ field: 'namespace', description: expect.stringMatching(/^must be a namespace slug/) }],
    });
    expect(decode(NamespaceParam, { namespace: 'acme/web' })).toEqual({ ok: true, value: { namespace: 'acme/web' } });
    for (const slug of ['acme', 'a/b/c', 'Acme', 'acme//web', 'a'.repeat(201)]) {
      expect(decode(NamespaceParam, { namespace: slug }).ok).toBe(isNamespaceSlug(slug));
    }
  });
});
