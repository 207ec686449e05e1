import { describe, expect, it } from '@jest/globals';
import type { ApprovalView } from '@cleveragents/contract';
import { asks } from '../../packages/cli/src/commands/approvals.js';
import { approvalView } from '../factories/approvals.js';

/* What `cleveragents approvals` says an approval asks, in its ASKS column. */

const approval = (subject: ApprovalView['subject']): ApprovalView => approvalView({ subject });

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
