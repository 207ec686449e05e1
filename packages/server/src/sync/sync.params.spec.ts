import { describe, expect, it } from '@jest/globals';
import { paramsPipe as pipeOf } from '../../../../test/support/params-pipe.js';
import { SyncRpc } from './sync.rpc.js';

/* The rules of sync params as the handlers' pipes apply them: each one the server has always had. */

const push = pipeOf(SyncRpc, 'push');
const pull = pipeOf(SyncRpc, 'pull');
const skill = { description: 'd', instructions: 'i' };
const change = (fields: object) => push({ changes: [{ kind: 'skill', name: 's', ...fields }] });

describe('sync params', () => {
  it('a delete names the revision it was made from, and carries no spec nor labels (null is none)', () => {
    expect(change({ op: 'delete', baseRevision: 3 })).toBe('ok');
    expect(change({ op: 'delete', baseRevision: 3, labels: null })).toBe('ok');
    expect(change({ op: 'delete' })).toEqual(['changes[0].baseRevision']);
    expect(change({ op: 'delete', baseRevision: 0 })).toEqual(['changes[0].baseRevision']);
    expect(change({ op: 'delete', baseRevision: 3, labels: {} })).toEqual(['changes[0].labels']);
    expect(change({ op: 'delete', baseRevision: 3, spec: skill })).toEqual(['changes[0].spec']);
    expect(change({ op: 'delete', baseRevision: 3, spec: {} })).toEqual([
      'changes[0].spec',
      'changes[0].spec.description',
      'changes[0].spec.instructions',
    ]);
  });

  it('an upsert carries the spec of its kind, checked only when the kind is valid', () => {
    expect(change({ op: 'upsert', spec: skill, labels: null })).toBe('ok');
    expect(change({ op: 'upsert' })).toEqual(['changes[0].spec']);
    expect(change({ op: 'upsert', baseRevision: null, spec: skill })).toEqual(['changes[0].baseRevision']);
    expect(change({ op: 'upsert', baseRevision: 2.5, spec: {} })).toEqual([
      'changes[0].baseRevision',
      'changes[0].spec.description',
      'changes[0].spec.instructions',
    ]);
    expect(push({ changes: [{ kind: 'agent', name: 's', op: 'upsert', spec: 42 }] })).toEqual(['changes[0].kind']);
    expect(
      push({
        changes: [
          { kind: 'skill', name: 's', op: 'upsert', spec: skill },
          { kind: 'actor', name: 'a', op: 'upsert', spec: { graphId: 'g', model: { model: 'm', temperature: 3 } } },
        ],
      }),
    ).toEqual(['changes[1].spec.model.temperature']);
  });

  it('optional params may be null; a cursor is any whole number', () => {
    expect(pull({ cursor: null, limit: null })).toBe('ok');
    expect(pull({ cursor: 1e20 })).toBe('ok');
    expect(pull({ cursor: 1.5, limit: 1001 })).toEqual(['cursor', 'limit']);
    expect(push({ changes: [{ kind: 'skill', name: 's', op: 'upsert', spec: skill }], atomic: null })).toBe('ok');
  });
});
