import { ValidateBy, type ValidationOptions } from 'class-validator';
import { describedConstraint } from '../rpc/schemas/params-schema.js';

/** docs/protocol.md §6.1: hierarchical slugs, `acme`, `acme/platform`; lowercase words joined by hyphens. */
export const NAMESPACE_SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*(?:\/[a-z0-9]+(?:-[a-z0-9]+)*)*$/;
export const MAX_NAMESPACE_SLUG_LENGTH = 200;

const SLUG_RULE =
  'must be a namespace slug such as "acme" or "acme/platform": lowercase letters, digits and single hyphens, ' +
  `levels joined by "/", at most ${MAX_NAMESPACE_SLUG_LENGTH} characters`;

export function isNamespaceSlug(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_NAMESPACE_SLUG_LENGTH && NAMESPACE_SLUG_PATTERN.test(value);
}

/** The namespace directly above `slug`, or undefined for a top-level one. */
export function parentOf(slug: string): string | undefined {
  const at = slug.lastIndexOf('/');
  return at > 0 ? slug.slice(0, at) : undefined;
}

/** `slug` and every namespace above it, top-level first: `a/b/c` → `a`, `a/b`, `a/b/c`. */
export function lineageOf(slug: string): string[] {
  const segments = slug.split('/');
  return segments.map((_, index) => segments.slice(0, index + 1).join('/'));
}

/** The last level of `slug`: the default display name. */
export function leafOf(slug: string): string {
  return slug.slice(slug.lastIndexOf('/') + 1);
}

/** The violation text for a field that must hold a slug. */
export function slugRule(field: string): string {
  return `${field} ${SLUG_RULE}`;
}

/** class-validator: the property is a namespace slug. */
export function IsNamespaceSlug(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: describedConstraint('isNamespaceSlug', {
        type: 'string',
        description: 'a namespace slug such as "acme" or "acme/platform"',
        maxLength: MAX_NAMESPACE_SLUG_LENGTH,
        pattern: NAMESPACE_SLUG_PATTERN.source,
      }),
      validator: {
        validate: (value) => isNamespaceSlug(value),
        defaultMessage: (args) => slugRule(args?.property ?? 'namespace'),
      },
    },
    options,
  );
}
