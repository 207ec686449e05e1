import { describe, expect, it } from '@jest/globals';
import type { ApprovalView } from '@cleveragents/contract';
import { asks } from '../../packages/cli/src/commands/approvals.js';

/* What `cleveragents approvals` says an approval asks, in its ASKS column. */

function approval(subject: ApprovalView['subject']): ApprovalView {
  return {
    approvalId: '01JAPPROVAL0000000000000000',
    namespace: 'default',
    requester: 'alice',
    sessionId: 's',
    taskId: 't',
    requestId: 'r',
    subject,
    subjectHash: 'h',
    options: ['approve', 'reject', 'edit'],
    state: 'pending',
    askedAt: '2026-03-01T10:00:00.000Z',
    answeredAt: null,
    answeredBy: null,
    channel: null,
    reason: null,
    expiresAt: null,
    onTimeout: null,
  };
}

describe('approvals: what one asks', () => {
  it("an external agent's request: the actor, its origin and its question, on one line without escapes", () => {
    const shown = asks(
      approval({
        kind: 'agent',
        actor: 'billing',
        origin: 'https://agents.example',
        remoteTaskId: 'r-1',
        text: 'Charge it?\u001b[2J\nreally',
      }),
    );
    expect(shown).toContain('billing (https://agents.example) asks: Charge it?');
    expect(shown).not.toMatch(/[\u0000-\u001f\u007f]/);
  });

  it('a long question is cut to 70 characters', () => {
    const shown = asks(
      approval({ kind: 'agent', actor: 'a', origin: 'https://x.example', remoteTaskId: 'r', text: 'q'.repeat(200) }),
    );
    expect(shown).toHaveLength(70);
    expect(shown.endsWith('…')).toBe(true);
  });
});
