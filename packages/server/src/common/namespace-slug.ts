import { MAX_NAMESPACE_SLUG_LENGTH, NAMESPACE_SLUG_PATTERN, NAMESPACE_SLUG_RULE } from '@cleveragents/contract';

/** docs/protocol.md §6.1: hierarchical slugs, `acme`, `acme/platform` (the contract's rule, for services). */
export { MAX_NAMESPACE_SLUG_LENGTH, NAMESPACE_SLUG_PATTERN };

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
  return `${field} ${NAMESPACE_SLUG_RULE}`;
}
