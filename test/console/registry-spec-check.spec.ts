import { describe, expect, it } from '@jest/globals';
import { jsonSchemaOf, methodSchemasOf } from '../../packages/contract/src/index.js';
import { lineDiff } from '../../packages/console/src/registry/line-diff.js';
import { specCheck, specSchemaOf } from '../../packages/console/src/registry/spec-check.js';

/*
 * The console's check of a registry spec before it is sent: against the params schema the server publishes
 * for `registry/update` (made here as the server makes it), its problems named by their paths in the params.
 */

const params = jsonSchemaOf(methodSchemasOf('_cleveragents/registry/update')!.params, 'input') as Record<
  string,
  unknown
>;
const check = (kind: 'actor' | 'tool' | 'skill' | 'profile', text: string) =>
  specCheck(specSchemaOf(params, kind))(text).violations;

describe('the registry spec check', () => {
  it('passes a valid spec of each kind', () => {
    expect(
      check('actor', JSON.stringify({ localGraph: 'orchestrator', model: { model: 'm', temperature: 1 } })),
    ).toEqual([]);
    expect(
      check('tool', JSON.stringify({ description: 'd', inputSchema: { type: 'object' }, runsOn: 'server' })),
    ).toEqual([]);
    expect(check('skill', JSON.stringify({ description: 'd', instructions: 'i' }))).toEqual([]);
    expect(check('profile', JSON.stringify({ gate: 'manual' }))).toEqual([]);
  });

  it('names a bad value, an unknown field and a missing one by their paths, without the "or null" noise', () => {
    expect(
      check('actor', JSON.stringify({ localGraph: 'orchestrator', model: { temperature: 5 }, colour: 1 })),
    ).toEqual([
      { path: 'spec.model.model', message: 'is required' },
      { path: 'spec.model.temperature', message: '5 is greater than 2.' },
      { path: 'spec.colour', message: 'is not a field of this spec' },
    ]);
    expect(check('actor', JSON.stringify({ localGraph: 'orchestrator', description: 3 }))).toEqual([
      { path: 'spec.description', message: 'Instance type "number" is invalid. Expected "string".' },
    ]);
    expect(check('tool', JSON.stringify({ description: 'd', inputSchema: {} }))).toEqual([
      { path: 'spec.runsOn', message: 'is required' },
    ]);
    expect(check('profile', JSON.stringify({ gate: 'sometimes' })).map((v) => v.path)).toEqual(['spec.gate']);
  });

  it('refuses text that is not a JSON object, naming spec', () => {
    expect(check('skill', '{"description": ')[0]).toEqual({
      path: 'spec',
      message: expect.stringMatching(/^is not JSON: /),
    });
    expect(check('skill', '[1]')).toEqual([{ path: 'spec', message: 'must be a JSON object' }]);
  });

  it('with no published schema, checks only that the spec is an object', () => {
    expect(specCheck(undefined)('{"anything": 1}')).toEqual({ spec: { anything: 1 }, violations: [] });
  });
});

describe('the conflict view’s line diff', () => {
  it('keeps common lines and lists yours before theirs where they differ', () => {
    expect(lineDiff('a\nb\nc', 'a\nB\nc\nd')).toEqual([
      { op: ' ', text: 'a' },
      { op: '-', text: 'b' },
      { op: '+', text: 'B' },
      { op: ' ', text: 'c' },
      { op: '+', text: 'd' },
    ]);
  });
});
