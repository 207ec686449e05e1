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

/** An approval webhook's id: a ULID, in either case. */
export const APPROVAL_WEBHOOK_ID_PATTERN = /^[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{26}$/;
const APPROVAL_WEBHOOK_ID_RULE = 'id must be an approval webhook id (a ULID)';
/** The longest webhook URL accepted: the same bound as a task's push-notification URL. */
export const MAX_APPROVAL_WEBHOOK_URL_LENGTH = 2048;
const APPROVAL_WEBHOOK_URL_RULE = `url must be an http or https URL of at most ${MAX_APPROVAL_WEBHOOK_URL_LENGTH} characters`;

/**
 * `approval/webhook/create`: where the namespace's new approvals are posted (a chat tool's incoming webhook, a
 * bot). The URL passes the same guard as a task's push-notification URL.
 */
export const CreateApprovalWebhookParams = z.strictObject({
  ...NamespaceParam.shape,
  url: z
    .string({ error: APPROVAL_WEBHOOK_URL_RULE })
    .min(1, { error: APPROVAL_WEBHOOK_URL_RULE })
    .max(MAX_APPROVAL_WEBHOOK_URL_LENGTH, { error: APPROVAL_WEBHOOK_URL_RULE }),
});
export type CreateApprovalWebhookParams = z.infer<typeof CreateApprovalWebhookParams>;

/** `approval/webhook/list`: every webhook of the namespace (a namespace holds only a few). */
export const ListApprovalWebhooksParams = z.strictObject({ ...NamespaceParam.shape });
export type ListApprovalWebhooksParams = z.infer<typeof ListApprovalWebhooksParams>;

/** `approval/webhook/delete`: one webhook of the namespace, by id. */
export const DeleteApprovalWebhookParams = z.strictObject({
  ...NamespaceParam.shape,
  id: z
    .string({ error: APPROVAL_WEBHOOK_ID_RULE })
    .regex(APPROVAL_WEBHOOK_ID_PATTERN, { error: APPROVAL_WEBHOOK_ID_RULE }),
});
export type DeleteApprovalWebhookParams = z.infer<typeof DeleteApprovalWebhookParams>;

/** How the last delivery to a webhook went: delivered (`ok`), or given up on and why. */
export const ApprovalWebhookDelivery = z.object({
  at: Instant,
  ok: z.boolean(),
  /** The approval the delivery was about. */
  approvalId: z.string(),
  attempts: z.int().min(0),
  /** The receiver's last HTTP status, when it answered. */
  status: z.int().nullable(),
  /** Why it failed (never a credential nor the URL's path or query); null when delivered. */
  error: z.string().nullable(),
});
export type ApprovalWebhookDelivery = z.infer<typeof ApprovalWebhookDelivery>;

/**
 * A webhook as lists show it: never its URL's path and query (a chat tool's incoming-webhook URL is itself a
 * credential) nor its signing secret, both sealed at rest; `origin` is the URL's scheme, host and port.
 */
export const ApprovalWebhookView = z.object({
  id: z.string(),
  namespace: z.string(),
  origin: z.string(),
  createdBy: z.string(),
  createdAt: Instant,
  lastDelivery: ApprovalWebhookDelivery.nullable(),
});
export type ApprovalWebhookView = z.infer<typeof ApprovalWebhookView>;

/**
 * What `approval/webhook/create` answers: the only time the signing `secret` is shown. Each delivery carries
 * `X-CleverAgents-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" with the secret>`.
 */
export const CreatedApprovalWebhook = ApprovalWebhookView.extend({ secret: z.string() });
export type CreatedApprovalWebhook = z.infer<typeof CreatedApprovalWebhook>;

export const ApprovalWebhookList = z.object({ items: z.array(ApprovalWebhookView) });
export type ApprovalWebhookList = z.infer<typeof ApprovalWebhookList>;
