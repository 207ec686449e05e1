/**
 * Parses a JSON-RPC body with the limits of docs/protocol.md §8: nesting depth bounded before JSON.parse
 * ever recurses, and `__proto__` / `constructor` keys refused wherever they appear.
 */
export type JsonGuardFailure =
  | { kind: 'syntax'; message: string }
  | { kind: 'too-deep'; maxDepth: number }
  | { kind: 'forbidden-key'; key: string }
  | { kind: 'nul-character'; key: string }
  | { kind: 'lone-surrogate'; path: string };

export type JsonGuardResult = { ok: true; value: unknown } | { ok: false; failure: JsonGuardFailure };

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor']);

/** Deepest nesting of arrays/objects in `text`, ignoring brackets inside strings; stops early past `limit`. */
export function exceedsDepth(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) {
        i++; // backslash: skip the escaped character
      } else if (c === 0x22) inString = false;
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
  const plain = plainText(text);
  try {
    value = JSON.parse(
      text,
      plain
        ? undefined
        : function (this: unknown, key: string, v: unknown) {
            if (forbidden === undefined && FORBIDDEN_KEYS.has(key)) forbidden = key;
            // PostgreSQL text and jsonb cannot hold U+0000: refuse it here rather than fail at the store.
            if (nul === undefined && (key.includes('\u0000') || (typeof v === 'string' && v.includes('\u0000')))) {
              nul = key;
            }
            return v;
          },
    );
  } catch (err) {
    return { ok: false, failure: { kind: 'syntax', message: (err as Error).message } };
  }
  if (forbidden !== undefined) return { ok: false, failure: { kind: 'forbidden-key', key: forbidden } };
  if (nul !== undefined) return { ok: false, failure: { kind: 'nul-character', key: nul } };
  // Only a `\uD8xx`-`\uDFxx` escape can carry a lone surrogate: raw ones do not survive UTF-8 decoding.
  if (!plain && SURROGATE_ESCAPE.test(text)) {
    const path = loneSurrogatePath(value, '');
    if (path !== undefined) return { ok: false, failure: { kind: 'lone-surrogate', path: path || '(root)' } };
  }
  return { ok: true, value };
}

const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/**
 * True when nothing the reviver or the surrogate check looks for can be in `text`, so that JSON.parse
 * needs no reviver (which costs it several times the parse): a forbidden key is spelt out or made of a `\u` escape, and
 * U+0000 and lone surrogates can only come from a `\u` escape (a raw U+0000 is a syntax error).
 */
function plainText(text: string): boolean {
  return !text.includes('\\u') && !text.includes('__proto__') && !text.includes('constructor');
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The JSON path (`params.message.parts[0].text`) of the first string holding a lone UTF-16 surrogate,
 * which PostgreSQL refuses in text and jsonb; for a key holding one, the path of its object.
 */
export function loneSurrogatePath(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return LONE_SURROGATE.test(value) ? path : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = loneSurrogatePath(value[i], `${path}[${i}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const [key, child] of Object.entries(value)) {
    if (LONE_SURROGATE.test(key)) return path;
    const found = loneSurrogatePath(child, path ? `${path}.${key}` : key);
    if (found !== undefined) return found;
  }
  return undefined;
}
