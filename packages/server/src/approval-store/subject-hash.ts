import { createHash } from 'node:crypto';

/** JSON with every object's keys sorted and no spaces: the same subject always hashes the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return value === undefined ? 'null' : JSON.stringify(value);
}

/** sha-256 (hex) of the canonical JSON of what an approval asks. */
export function subjectHashOf(subject: unknown): string {
  return createHash('sha256').update(canonicalJson(subject)).digest('hex');
}
