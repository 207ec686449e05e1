/**
 * Parses a JSON-RPC body with the limits of SPEC.md §8: nesting depth bounded before JSON.parse
 * ever recurses, and `__proto__` / `constructor` keys refused wherever they appear.
 */
export type JsonGuardFailure =
  | { kind: 'syntax'; message: string }
  | { kind: 'too-deep'; maxDepth: number }
  | { kind: 'forbidden-key'; key: string }
  | { kind: 'nul-character'; key: string };

export type JsonGuardResult = { ok: true; value: unknown } | { ok: false; failure: JsonGuardFailure };

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor']);

/** Deepest nesting of arrays/objects in `text`, ignoring brackets inside strings; stops early past `limit`. */
export function exceedsDepth(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

export function parseGuardedJson(text: string, maxDepth: number): JsonGuardResult {
  if (exceedsDepth(text, maxDepth)) return { ok: false, failure: { kind: 'too-deep', maxDepth } };
  let forbidden: string | undefined;
  let nul: string | undefined;
  let value: unknown;
  try {
    value = JSON.parse(text, function (this: unknown, key: string, v: unknown) {
      if (forbidden === undefined && FORBIDDEN_KEYS.has(key)) forbidden = key;
      // PostgreSQL text and jsonb cannot hold U+0000: refuse it here rather than fail at the store.
      if (nul === undefined && (key.includes('\u0000') || (typeof v === 'string' && v.includes('\u0000')))) nul = key;
      return v;
    });
  } catch (err) {
    return { ok: false, failure: { kind: 'syntax', message: (err as Error).message } };
  }
  if (forbidden !== undefined) return { ok: false, failure: { kind: 'forbidden-key', key: forbidden } };
  if (nul !== undefined) return { ok: false, failure: { kind: 'nul-character', key: nul } };
  return { ok: true, value };
}
