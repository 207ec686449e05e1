import { describe, expect, it } from '@jest/globals';
import { narrowedPolicy } from './gate-policy.js';

/* How a client's gate request is narrowed to its profile: stricter always, looser only as the profile lets. */

const SUPERVISED = { gate: 'supervised' as const, allowedTools: ['read'], clientMayAllow: ['write'] };

describe('narrowedPolicy', () => {
  it("without a request: the profile's gates, nothing granted or refused", () => {
    expect(narrowedPolicy(SUPERVISED, undefined)).toEqual({
      policy: { gate: 'supervised', allowedTools: ['read'] },
      allowed: [],
      refused: [],
    });
  });

  it('allow: granted for what the profile lets run or lets a client allow, refused beyond', () => {
    expect(narrowedPolicy(SUPERVISED, { allow: ['read', 'write', 'shell'] })).toEqual({
      policy: { gate: 'supervised', allowedTools: ['read', 'write'] },
      allowed: ['read', 'write'],
      refused: ['shell'],
    });
  });

  it('manual lets a client allow nothing; autonomous lets everything run anyway', () => {
    expect(narrowedPolicy({ gate: 'manual', allowedTools: [], clientMayAllow: [] }, { allow: ['read'] })).toEqual({
      policy: { gate: 'manual', allowedTools: [] },
      allowed: [],
      refused: ['read'],
    });
    expect(narrowedPolicy({ gate: 'autonomous', allowedTools: [], clientMayAllow: [] }, { allow: ['read'] })).toEqual({
      policy: { gate: 'autonomous', allowedTools: [] },
      allowed: ['read'],
      refused: [],
    });
  });

  it('ask: asked under any gate, and off the allow-list', () => {
    expect(narrowedPolicy(SUPERVISED, { ask: ['read'] })).toEqual({
      policy: { gate: 'supervised', allowedTools: [], askedTools: ['read'] },
      allowed: [],
      refused: [],
    });
    expect(narrowedPolicy({ gate: 'autonomous', allowedTools: [], clientMayAllow: [] }, { ask: ['write'] })).toEqual({
      policy: { gate: 'autonomous', allowedTools: [], askedTools: ['write'] },
      allowed: [],
      refused: [],
    });
  });
});
