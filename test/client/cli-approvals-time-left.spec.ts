import { describe, expect, it } from '@jest/globals';
import type { ApprovalView } from '@cleveragents/contract';
import { timeLeft } from '../../packages/cli/src/commands/approvals.js';
import { gateDeadline, span } from '../../packages/cli/src/render.js';
import { approvalView } from '../factories/approvals.js';

/* How `cleveragents approvals` shows an approval's timeout: the time left, or how long it is overdue. */

const ASKED = Date.parse('2026-03-01T10:00:00.000Z');

function approval(extra: Partial<ApprovalView>): ApprovalView {
  return approvalView({
    options: ['approve', 'reject'],
    askedAt: new Date(ASKED).toISOString(),
    expiresAt: new Date(ASKED + 15 * 60_000).toISOString(),
    onTimeout: 'deny',
    ...extra,
  });
}

describe('approvals: the time left', () => {
  it('spans show their two largest units', () => {
    expect([0, 999, 45_000, 899_000, 3_600_000, 7_530_000, 3 * 86_400_000 + 4 * 3_600_000 + 5_000].map(span)).toEqual([
      '0s',
      '0s',
      '45s',
      '14m 59s',
      '1h 0m',
      '2h 5m',
      '3d 4h',
    ]);
  });

  it('a pending approval shows the time left, then how long it is overdue', () => {
    expect(timeLeft(approval({}), ASKED + 1000)).toBe('14m 59s left');
    expect(timeLeft(approval({ onTimeout: 'keep-waiting' }), ASKED + 15 * 60_000)).toBe('overdue 0s');
    expect(timeLeft(approval({ onTimeout: 'keep-waiting' }), ASKED + 17 * 60_000 + 30_000)).toBe('overdue 2m 30s');
  });

  it('without a timeout, or once ended, there is nothing to count', () => {
    expect(timeLeft(approval({ expiresAt: null, onTimeout: null }), ASKED)).toBe('—');
    expect(timeLeft(approval({ state: 'expired' }), ASKED + 16 * 60_000)).toBe('—');
  });
});

describe('a gate asked in a chat: its deadline', () => {
  const expiresAt = new Date(ASKED + 15 * 60_000).toISOString();

  it('says how long it waits and what then', () => {
    expect(gateDeadline({ expiresAt, onTimeout: 'deny' }, ASKED)).toBe('Answer within 15m 0s, then it is denied.');
    expect(gateDeadline({ expiresAt, onTimeout: 'keep-waiting' }, ASKED + 60_000)).toBe(
      'Answer within 14m 0s, then it is shown overdue.',
    );
    expect(gateDeadline({ expiresAt, onTimeout: 'keep-waiting' }, ASKED + 16 * 60_000)).toBe(
      'Overdue by 1m 0s: it waits on for an answer.',
    );
  });

  it('says nothing without one, or of a time it cannot read', () => {
    expect(gateDeadline({}, ASKED)).toBeUndefined();
    expect(gateDeadline({ expiresAt: 'soon', onTimeout: 'deny' }, ASKED)).toBeUndefined();
  });
});
