import { describe, expect, it } from '@jest/globals';
import { exceedsDepth, parseGuardedJson } from './json-guard.js';

describe('json guard', () => {
  it('measures nesting of objects and arrays, not brackets inside strings', () => {
    expect(exceedsDepth('{"a":[{"b":1}]}', 3)).toBe(false);
    expect(exceedsDepth('{"a":[{"b":1}]}', 2)).toBe(true);
    expect(exceedsDepth(JSON.stringify({ s: '[[[[[[[[[[{{{{{{' }), 1)).toBe(false);
    expect(exceedsDepth(JSON.stringify({ s: 'quote \\" then [[[[' }), 1)).toBe(false);
    expect(exceedsDepth('[[],[],[[]]]', 3)).toBe(false);
    expect(exceedsDepth('[[],[],[[]]]', 2)).toBe(true);
  });

  it('refuses deep input before JSON.parse recurses', () => {
    const deep = `${'['.repeat(100000)}${']'.repeat(100000)}`;
    expect(parseGuardedJson(deep, 64)).toEqual({ ok: false, failure: { kind: 'too-deep', maxDepth: 64 } });
  });

  it('refuses __proto__ and constructor keys at any depth, and allows the words as values', () => {
    expect(parseGuardedJson('{"a":{"b":{"__proto__":{}}}}', 64)).toEqual({
      ok: false,
      failure: { kind: 'forbidden-key', key: '__proto__' },
    });
    expect(parseGuardedJson('[{"constructor":1}]', 64)).toEqual({
      ok: false,
      failure: { kind: 'forbidden-key', key: 'constructor' },
    });
    expect(parseGuardedJson('{"text":"__proto__ constructor"}', 64)).toEqual({
      ok: true,
      value: { text: '__proto__ constructor' },
    });
  });

  it('refuses U+0000 in keys and strings, naming the key', () => {
    expect(parseGuardedJson('{"parts":[{"text":"a\\u0000b"}]}', 64)).toEqual({
      ok: false,
      failure: { kind: 'nul-character', key: 'text' },
    });
    expect(parseGuardedJson('{"text":"a\\\\u0000b"}', 64)).toEqual({ ok: true, value: { text: 'a\\u0000b' } });
  });

  it('refuses a lone UTF-16 surrogate in a string or a key, naming its JSON path; keeps a pair', () => {
    expect(parseGuardedJson('{"p":{"parts":[{"text":"ok"},{"text":"a\\ud800b"}]}}', 64)).toEqual({
      ok: false,
      failure: { kind: 'lone-surrogate', path: 'p.parts[1].text' },
    });
    expect(parseGuardedJson('{"p":{"\\udc00":1}}', 64)).toEqual({
      ok: false,
      failure: { kind: 'lone-surrogate', path: 'p' },
    });
    expect(parseGuardedJson('"\\udfff"', 64)).toEqual({
      ok: false,
      failure: { kind: 'lone-surrogate', path: '(root)' },
    });
    expect(parseGuardedJson('{"t":"\\ud83d\\udd11"}', 64)).toEqual({ ok: true, value: { t: '\u{1F511}' } });
    expect(parseGuardedJson('{"t":"\\\\ud800"}', 64)).toEqual({ ok: true, value: { t: '\\ud800' } });
  });

  it('refuses a forbidden key or U+0000 spelt with escapes', () => {
    expect(parseGuardedJson('{"a":{"\\u005f_proto__":{}}}', 64)).toEqual({
      ok: false,
      failure: { kind: 'forbidden-key', key: '__proto__' },
    });
    expect(parseGuardedJson('{"constructo\\u0072":1}', 64)).toEqual({
      ok: false,
      failure: { kind: 'forbidden-key', key: 'constructor' },
    });
    expect(parseGuardedJson('{"k\\u0000":1}', 64)).toEqual({
      ok: false,
      failure: { kind: 'nul-character', key: 'k\u0000' },
    });
  });

  it('parses text with no escape or forbidden word as JSON.parse does, syntax errors included', () => {
    const text = JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'SendMessage',
      params: { message: { parts: [{ text: 'a\nb "q"' }] } },
    });
    expect(parseGuardedJson(text, 64)).toEqual({ ok: true, value: JSON.parse(text) });
    const raw = '{"a":"x\u0000y"}';
    expect(parseGuardedJson(raw, 64)).toEqual({ ok: false, failure: { kind: 'syntax', message: expect.any(String) } });
  });

  it('reports syntax errors', () => {
    const result = parseGuardedJson('{"a":', 64);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.failure.kind).toBe('syntax');
  });
});
