import { describe, expect, it } from '@jest/globals';
import { jsonSchemaOf, METHODS, PushParams, PushResult, type PushChange } from '@cleveragents/contract';
import { changeValidator } from './validate.js';

/* Local files checked against the `sync/push` schema as the server publishes it (the contract's). */

const bundle = {
  methods: {
    [METHODS.sync.push]: { params: jsonSchemaOf(PushParams, 'input'), result: jsonSchemaOf(PushResult, 'output') },
  },
};
const validate = changeValidator(bundle)!;
const upsert = (kind: PushChange['kind'], spec: unknown, labels?: unknown): PushChange =>
  ({ kind, name: 'n', op: 'upsert', spec, labels }) as PushChange;

describe('the published sync/push schema, applied to local files', () => {
  it('names each wrong field once, by the rule of the spec of its kind', () => {
    const changes = [
      upsert('actor', { localGraph: 'orchestrator', model: { model: 'm', temperature: 'hot' } }, {}),
      upsert('skill', { description: 'No instructions' }),
      upsert('profile', { gate: 'manual', budget: { tokens: 'x' } }),
    ];
    expect(validate(changes)).toEqual([
      { index: 0, field: 'spec.model.temperature', description: 'must be a number' },
      { index: 1, field: 'spec.instructions', description: 'is required' },
      { index: 2, field: 'spec.budget.tokens', description: 'must be an integer' },
    ]);
  });

  it('takes what the server takes: an optional field given as null, a tool inputSchema left to the server', () => {
    const changes = [
      upsert('actor', { description: null, graphId: 'g', model: { model: 'm', temperature: null }, tools: null }, null),
      upsert('tool', { description: 'd', inputSchema: { type: 'strin' }, runsOn: 'server' }),
    ];
    expect(validate(changes)).toEqual([]);
  });

  it('a bad label map is named as a whole', () => {
    const fields = validate([upsert('skill', { description: 'd', instructions: 'i' }, { 'Bad Key': 'x' })]).map(
      (violation) => violation.field,
    );
    expect(new Set(fields)).toEqual(new Set(['labels']));
  });
});
