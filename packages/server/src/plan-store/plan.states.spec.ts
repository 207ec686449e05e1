import { describe, expect, it } from '@jest/globals';
import { BusinessRuleViolation } from '../common/domain.errors.js';
import { PLAN_OPERATIONS, PLAN_STATUSES, transition, type PlanOperation, type PlanStatus } from './plan.states.js';

/**
 * The whole machine of docs/protocol.md §6.5, written out once more by hand: for every operation and every
 * state, the state it leads to, or `refused`. `same` means allowed without a change of status.
 */
const EXPECTED: Record<PlanOperation, Record<PlanStatus, PlanStatus | 'same' | 'refused'>> = {
  update: {
    draft: 'same',
    approved: 'refused',
    executing: 'refused',
    paused: 'same',
    completed: 'refused',
    failed: 'refused',
    canceled: 'refused',
  },
  approve: {
    draft: 'approved',
    approved: 'refused',
    executing: 'refused',
    paused: 'refused',
    completed: 'refused',
    failed: 'refused',
    canceled: 'refused',
  },
  execute: {
    draft: 'refused',
    approved: 'executing',
    executing: 'refused',
    paused: 'refused',
    completed: 'refused',
    failed: 'refused',
    canceled: 'refused',
  },
  pause: {
    draft: 'refused',
    approved: 'refused',
    executing: 'paused',
    paused: 'refused',
    completed: 'refused',
    failed: 'refused',
    canceled: 'refused',
  },
  resume: {
    draft: 'refused',
    approved: 'refused',
    executing: 'refused',
    paused: 'executing',
    completed: 'refused',
    failed: 'refused',
    canceled: 'refused',
  },
  complete: {
    draft: 'refused',
    approved: 'refused',
    executing: 'completed',
    paused: 'refused',
    completed: 'refused',
    failed: 'refused',
    canceled: 'refused',
  },
  fail: {
    draft: 'refused',
    approved: 'refused',
    executing: 'failed',
    paused: 'failed',
    completed: 'refused',
    failed: 'refused',
    canceled: 'refused',
  },
  cancel: {
    draft: 'canceled',
    approved: 'canceled',
    executing: 'canceled',
    paused: 'canceled',
    completed: 'refused',
    failed: 'refused',
    canceled: 'refused',
  },
  delete: {
    draft: 'same',
    approved: 'same',
    executing: 'refused',
    paused: 'refused',
    completed: 'same',
    failed: 'same',
    canceled: 'same',
  },
};

const CELLS = PLAN_OPERATIONS.flatMap((operation) =>
  PLAN_STATUSES.map((status) => ({ operation, status, expected: EXPECTED[operation][status] })),
);

describe('the plan state machine (docs/protocol.md §6.5)', () => {
  it('the table covers every operation and every state', () => {
    expect(Object.keys(EXPECTED).sort()).toEqual([...PLAN_OPERATIONS].sort());
    expect(CELLS).toHaveLength(PLAN_OPERATIONS.length * PLAN_STATUSES.length);
  });

  it.each(CELLS)('$operation from $status: $expected', ({ operation, status, expected }) => {
    if (expected !== 'refused') {
      expect(transition('P1', status, operation)).toBe(expected === 'same' ? status : expected);
      return;
    }
    let error: unknown;
    try {
      transition('P1', status, operation);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(BusinessRuleViolation);
    const refusal = error as BusinessRuleViolation;
    expect(refusal.reason).toBe('INVALID_TRANSITION');
    expect(refusal.metadata).toEqual({ planId: 'P1', status, operation });
    const needs = PLAN_STATUSES.filter((s) => EXPECTED[operation][s] !== 'refused');
    expect(refusal.message).toContain(`Plan P1 is ${status}: ${operation} needs a plan that is`);
    for (const state of needs) expect(refusal.message).toContain(state);
  });

  it('a plan reaches a final state only through executing (or by cancel), and leaves none', () => {
    for (const final of ['completed', 'failed', 'canceled'] as const) {
      const out = PLAN_OPERATIONS.filter((op) => !['delete'].includes(op) && EXPECTED[op][final] !== 'refused');
      expect({ final, out }).toEqual({ final, out: [] });
    }
  });
});
