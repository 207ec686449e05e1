/** `_cleveragents/approval/*`: the gates tasks wait at, answered from any client (docs/plans.md#approvals). */
import { z } from 'zod';
import { ApprovalDecision, ApprovalSubject, ApprovalTimeoutAction, MAX_APPROVAL_REASON_LENGTH } from '../data-parts.js';
import { Instant, NamespaceParam, PageParams, page, type Page } from './common.js';
import { SessionId } from './session.js';

export const MAX_APPROVAL_ID_LENGTH = 256;
export const MAX_REQUESTER_LENGTH = 300;
/** `approval/list`'s `requester` for every requester's approvals. */
export const EVERY_REQUESTER = '*';

/** Where an approval stands: waiting, answered one way or another, or ended without an answer. */
export const APPROVAL_STATES = ['pending', 'approved', 'rejected', 'edited', 'canceled', 'expired'] as const;
export const ApprovalState = z.enum(APPROVAL_STATES, { error: `state must be one of ${APPROVAL_STATES.join(', ')}` });
export type ApprovalState = z.infer<typeof ApprovalState>;

/**
 * How an answer came: a data part on the waiting task (`stream`), `approval/answer` (`method`), or the server
 * denying it when its profile's timeout ran out (`timeout`).
 */
export const APPROVAL_CHANNELS = ['stream', 'method', 'timeout'] as const;
export const ApprovalChannel = z.enum(APPROVAL_CHANNELS);
export type ApprovalChannel = z.infer<typeof ApprovalChannel>;

const ApprovalId = z.string().min(1).max(MAX_APPROVAL_ID_LENGTH);

/** Names one approval (`approval/get`). */
export const ApprovalKeyParams = z.strictObject({ ...NamespaceParam.shape, approvalId: ApprovalId });
export type ApprovalKeyParams = z.infer<typeof ApprovalKeyParams>;

/** `approval/list`: newest first; by default only those still pending. */
export const ListApprovalsParams = PageParams.extend({
  ...NamespaceParam.shape,
  /** Only approvals in this state; `pending` when absent or null. */
  state: ApprovalState.nullish(),
  /** Only the approvals of this session. */
  sessionId: SessionId.nullish(),
  /**
   * Whose approvals: the caller's own when absent; another principal's subject, or `*` for everyone's, needs
   * the admin role in the namespace (admins and owners answer the namespace's approvals).
   */
  requester: z.string().min(1).max(MAX_REQUESTER_LENGTH).nullish(),
});
export type ListApprovalsParams = z.infer<typeof ListApprovalsParams>;

/**
 * `approval/answer`: the decision, as the in-stream `cleveragents/approval-response` carries it; `edited` (with
 * `edit`) is the plan's new entry list or the tool call's new arguments; `reason` (with `reject`) is told to
 * the model.
 */
export const AnswerApprovalParams = ApprovalKeyParams.extend({
  decision: ApprovalDecision,
  edited: z.unknown().optional(),
  reason: z.string().max(MAX_APPROVAL_REASON_LENGTH).nullish(),
});
export type AnswerApprovalParams = z.infer<typeof AnswerApprovalParams>;

/** One approval: what it asks (`subject`, and its sha-256 `subjectHash`), of whom, and how it was answered. */
export const ApprovalView = z.object({
  approvalId: z.string(),
  namespace: z.string(),
  /** The principal whose task asks: the session's owner. */
  requester: z.string(),
  sessionId: z.string(),
  taskId: z.string(),
  /** The id of the approval-request the task's status message carries. */
  requestId: z.string(),
  subject: ApprovalSubject,
  /** sha-256 (hex) of the subject's canonical JSON (keys sorted, no spaces). */
  subjectHash: z.string(),
  options: z.array(ApprovalDecision),
  state: ApprovalState,
  askedAt: Instant,
  answeredAt: Instant.nullable(),
  /** The subject who answered. */
  answeredBy: z.string().nullable(),
  channel: ApprovalChannel.nullable(),
  /** A rejection's reason, or why the approval ended without an answer. */
  reason: z.string().nullable(),
  /**
   * When its profile's timeout runs out (null: it waits until answered); a client shows the time left, or,
   * past it while still pending (`onTimeout` `keep-waiting`), that it is overdue.
   */
  expiresAt: Instant.nullable(),
  /** What happens at `expiresAt`: `deny` (the gate is answered as rejected) or `keep-waiting`; null without one. */
  onTimeout: ApprovalTimeoutAction.nullable(),
  /** What an `edit` answer gave: the entries or arguments that ran instead. */
  edited: z.unknown().optional(),
});
export type ApprovalView = z.infer<typeof ApprovalView>;

export const ApprovalPage = page(ApprovalView);
export type ApprovalPage = Page<ApprovalView>;
