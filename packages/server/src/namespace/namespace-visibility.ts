import { EVERY_NAMESPACE } from '../common/principal.js';
import { isNamespaceSlug } from '../common/namespace-slug.js';

export interface SqlFilter {
  sql: string;
  values: string[];
}

/**
 * The SQL condition on `slug` that selects the namespaces a principal with these grant keys sees: a
 * granted namespace and everything below it, every namespace for `*` (`TRUE`), none without a grant (`FALSE`).
 * Placeholders start at `$firstParam`. A grant covered by another (`acme/web` under `acme`) is dropped.
 * Descendants of `g` are the range [`g/`, `g0`): slugs hold only [a-z0-9-/] and nothing sorts between
 * `/` and `0` in the "C" collation, so each grant is two index range scans on the primary key.
 */
export function visibilityFilter(grantKeys: Iterable<string>, firstParam = 1): SqlFilter {
  const keys = new Set(grantKeys);
  if (keys.has(EVERY_NAMESPACE)) return { sql: 'TRUE', values: [] };
  const slugs = [...keys].filter(isNamespaceSlug).sort();
  const roots = slugs.filter((slug) => !slugs.some((other) => slug.startsWith(`${other}/`)));
  if (roots.length === 0) return { sql: 'FALSE', values: [] };
  const values: string[] = [];
  const clauses = roots.map((root) => {
    values.push(root, `${root}/`, `${root}0`);
    const at = firstParam + values.length - 3;
    return `slug = $${at} OR (slug >= $${at + 1} AND slug < $${at + 2})`;
  });
  return { sql: `(${clauses.join(' OR ')})`, values };
}
