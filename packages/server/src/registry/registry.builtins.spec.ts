import { describe, expect, it } from '@jest/globals';
import { SPEC_SCHEMAS } from '@cleveragents/contract';
import { BUILTIN_DEFINITIONS, DEFAULT_ACTOR } from './registry.builtins.js';

describe('built-in definitions', () => {
  it('are the three standard profiles and a default actor on the supervised profile', () => {
    expect(BUILTIN_DEFINITIONS.map((d) => [d.kind, d.name, d.spec.gate ?? d.spec.profile])).toEqual([
      ['profile', 'manual', 'manual'],
      ['profile', 'supervised', 'supervised'],
      ['profile', 'autonomous', 'autonomous'],
      ['actor', DEFAULT_ACTOR, 'supervised'],
    ]);
  });

  it.each(BUILTIN_DEFINITIONS.map((d) => [d.kind, d.name, d] as const))(
    '%s %s passes the validation a client change gets',
    (kind, _name, definition) => {
      expect(SPEC_SCHEMAS[kind].safeParse(definition.spec).error?.issues ?? []).toEqual([]);
    },
  );
});
