import type { ApprovalView } from '@cleveragents/contract';

/** An approval as `_cleveragents/approval/list|get` answer it: a pending plan approval in `default`, `overrides` on top. */
export function approvalView(overrides: Partial<ApprovalView> = {}): ApprovalView {
  return {
    approvalId: '01JAPPROVAL0000000000000000',
    namespace: 'default',
    requester: 'alice',
    sessionId: 's',
    taskId: 't',
    requestId: 'r',
    subject: { kind: 'plan', entries: [] },
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
    ...overrides,
  };
}
