import { describe, expect, it } from '@jest/globals';
import { validateSync } from 'class-validator';
import { IsNamespaceSlug, isNamespaceSlug, leafOf, lineageOf, parentOf } from './namespace-slug.js';

class Holder {
  @IsNamespaceSlug()
  namespace: unknown;
}

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

  it('validates through class-validator with a message that names the field and the rule', () => {
    const bad = Object.assign(new Holder(), { namespace: 'Acme/' });
    const errors = validateSync(bad);
    expect(errors).toHaveLength(1);
    expect(Object.values(errors[0].constraints ?? {})[0]).toMatch(/^namespace must be a namespace slug/);
    expect(validateSync(Object.assign(new Holder(), { namespace: 'acme/web' }))).toEqual([]);
  });
});
