import { describe, expect, it } from '@jest/globals';
import { SPEC_SCHEMAS } from '@cleveragents/contract';
import { BUILTIN_DEFINITIONS, DEFAULT_ACTOR } from './registry.builtins.js';

describe('built-in definitions', () => {
  it('are the standard profiles and a default actor on the guarded profile, guarded last (as its migration adds it)', () => {
    expect(BUILTIN_DEFINITIONS.map((d) => [d.kind, d.name, d.spec.gate ?? d.spec.profile])).toEqual([
      ['profile', 'manual', 'manual'],
      ['profile', 'supervised', 'supervised'],
      ['profile', 'autonomous', 'autonomous'],
      ['actor', DEFAULT_ACTOR, 'guarded'],
      ['profile', 'guarded', 'supervised'],
    ]);
  });

  it('guarded lets reads and commands run, and asks for writes unless a client lets them run', () => {
    const guarded = BUILTIN_DEFINITIONS.find((d) => d.name === 'guarded');
    expect(guarded?.spec.allowedTools).toEqual(['fs_read_text_file', 'terminal_create']);
    expect(guarded?.spec.clientMayAllow).toEqual(['fs_write_text_file']);
  });

  it.each(BUILTIN_DEFINITIONS.map((d) => [d.kind, d.name, d] as const))(
    '%s %s passes the validation a client change gets',
    (kind, _name, definition) => {
      expect(SPEC_SCHEMAS[kind].safeParse(definition.spec).error?.issues ?? []).toEqual([]);
    },
  );
});
