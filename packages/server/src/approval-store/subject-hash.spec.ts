import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { canonicalJson, subjectHashOf } from './subject-hash.js';

describe('canonicalJson and subjectHashOf', () => {
  it('sorts keys at every depth, keeps array order, drops undefined members, adds no spaces', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: null, y: 'x' }], c: undefined } })).toBe(
      '{"a":{"d":[3,{"y":"x","z":null}]},"b":1}',
    );
    expect(canonicalJson('line\nbreak "quoted"')).toBe('"line\\nbreak \\"quoted\\""');
    expect(canonicalJson(undefined)).toBe('null');
  });

  it('hashes the same subject the same whatever its key order, and a changed argument differently', () => {
    const subject = { kind: 'tool', tool: 'fs_write_text_file', args: { path: 'a.txt', content: 'x' } };
    const reordered = { args: { content: 'x', path: 'a.txt' }, tool: 'fs_write_text_file', kind: 'tool' };
    const expected = createHash('sha256')
      .update('{"args":{"content":"x","path":"a.txt"},"kind":"tool","tool":"fs_write_text_file"}')
      .digest('hex');
    expect(subjectHashOf(subject)).toBe(expected);
    expect(subjectHashOf(reordered)).toBe(expected);
    expect(subjectHashOf({ ...subject, args: { path: 'a.txt', content: 'y' } })).not.toBe(expected);
  });
});
