/**
 * The data parts and metadata through which an orchestrated task talks with its client: the plan as a
 * checklist, approval gates, client-side tool calls (ACP-shaped) and what the client declares it
 * handles. The server writes them into task statuses and artifacts; the client reads and answers them.
 */

export const PLAN_ENTRY_PRIORITIES = ['high', 'medium', 'low'] as const;
export type PlanEntryPriority = (typeof PLAN_ENTRY_PRIORITIES)[number];
export const PLAN_ENTRY_STATUSES = ['pending', 'in_progress', 'completed', 'failed', 'skipped'] as const;
export type PlanEntryStatus = (typeof PLAN_ENTRY_STATUSES)[number];
/** How many entries a plan may hold. */
export const MAX_PLAN_ENTRIES = 200;
/** How long one entry's text may be. */
export const MAX_PLAN_ENTRY_LENGTH = 2000;

/** One step of a plan, as ACP's plan entries: what to do, how much it matters, how far it is. */
export interface PlanEntry {
  content: string;
  priority: PlanEntryPriority;
  status: PlanEntryStatus;
}

/** Data-part `type`s (docs/protocol.md §5). */
export const PLAN_DATA_TYPE = 'cleveragents/plan';
export const APPROVAL_REQUEST_TYPE = 'cleveragents/approval-request';
export const APPROVAL_RESPONSE_TYPE = 'cleveragents/approval-response';
export const CLIENT_REQUEST_TYPE = 'cleveragents/client-request';
export const CLIENT_RESPONSE_TYPE = 'cleveragents/client-response';
/** The data part an interrupt's value travels in, beside its question, when it is none of the above. */
export const INTERRUPT_DATA_TYPE = 'cleveragents/interrupt';
/** Message metadata key under which a client declares the client-side tools it handles. */
export const CLIENT_CAPABILITIES_KEY = 'cleveragents/clientCapabilities';
/** Message metadata naming the plan a task started by `_cleveragents/plan/execute` runs. */
export const PLAN_ID_KEY = 'cleveragents/planId';

/**
 * The metadata key of every event a stream sends: the event's sequence number in its task's log (from 1, no
 * gap). A client resumes after the last one it saw with SubscribeToTask `lastSequence` (docs/protocol.md §10.1).
 */
export const SEQUENCE_KEY = 'cleveragents/sequence';

/** The SubscribeToTask (and v0.3 `tasks/resubscribe`) param naming the last sequence number a client saw. */
export const LAST_SEQUENCE_PARAM = 'lastSequence';

/** What the client said it handles (`cleveragents/clientCapabilities` in message metadata). */
export interface ClientCapabilities {
  fs: { read: boolean; write: boolean };
  terminal: boolean;
}

export const NO_CLIENT_CAPABILITIES: ClientCapabilities = { fs: { read: false, write: false }, terminal: false };

/** The ACP-shaped client methods (docs/protocol.md §5). */
export const CLIENT_METHODS = [
  'fs/read_text_file',
  'fs/write_text_file',
  'terminal/create',
  'terminal/output',
  'terminal/wait_for_exit',
  'terminal/kill',
  'terminal/release',
] as const;
export type ClientMethod = (typeof CLIENT_METHODS)[number];

export const TOOL_CALL_EVENT = 'cleveragents/tool-call';
export const TOOL_RESULT_EVENT = 'cleveragents/tool-result';
export interface ToolCallReport {
  /** The model's tool call id. */
  id: string;
  name: string;
  args: Record<string, unknown>;
}

export interface ToolResultReport {
  id: string;
  name: string;
  /** What the tool gave back (a client's `result`), when it succeeded. */
  result?: unknown;
  /** Why it did not: the client's error, a rejected approval, an unknown tool. */
  error?: { code?: number; message: string };
  /**
   * Set when the call never ran — rejected at its gate, or a tool not offered or not runnable here — so
   * no call was reported before it: the arguments the model gave.
   */
  notRun?: { args: Record<string, unknown> };
}

export const APPROVAL_DECISIONS = ['approve', 'reject', 'edit'] as const;
export type ApprovalDecision = (typeof APPROVAL_DECISIONS)[number];

export type ApprovalSubject =
  /** The orchestrator's plan: `edit` replaces the entries with `edited` (an entry list). */
  | { kind: 'plan'; entries: PlanEntry[] }
  /** A tool call: `edit` replaces its arguments with `edited` (an object). */
  | { kind: 'tool'; toolCallId: string; tool: string; method?: ClientMethod; args: Record<string, unknown> };

/** An interrupt value: the task waits in `input-required` with this data part. */
export interface ApprovalRequest {
  type: typeof APPROVAL_REQUEST_TYPE;
  requestId: string;
  subject: ApprovalSubject;
  options: ApprovalDecision[];
}

/** The client's answer (a data part of the SendMessage on the waiting task), the graph's resume value. */
export interface ApprovalResponse {
  type: typeof APPROVAL_RESPONSE_TYPE;
  requestId: string;
  decision: ApprovalDecision;
  edited?: unknown;
}

export interface ClientCall {
  /** Unique within the task; the response names it. */
  id: string;
  method: ClientMethod;
  params: Record<string, unknown>;
}

/** An interrupt value: the client must run these calls and answer with a client-response. */
export interface ClientRequest {
  type: typeof CLIENT_REQUEST_TYPE;
  requests: ClientCall[];
}

export interface ClientCallResult {
  id: string;
  result?: unknown;
  error?: { code?: number; message: string; data?: unknown };
}

export interface ClientResponse {
  type: typeof CLIENT_RESPONSE_TYPE;
  responses: ClientCallResult[];
}

/** A plan's lifecycle states: draft → approved → executing ⇄ paused → completed | failed | canceled. */
export const PLAN_STATUSES = ['draft', 'approved', 'executing', 'paused', 'completed', 'failed', 'canceled'] as const;
export type PlanStatus = (typeof PLAN_STATUSES)[number];

/** A plan as a `cleveragents/plan` data part shows it in a task's status (`{type, plan}`). */
export interface PlanDataView {
  planId?: string;
  goal?: string;
  status?: PlanStatus;
  revision?: number;
  entries: PlanEntry[];
}

/** The `cleveragents/plan` data part. */
export interface PlanDataPart {
  type: typeof PLAN_DATA_TYPE;
  plan: PlanDataView;
}

/** A tool call's artifact (`name: tool-call`, `artifactId: tool-<call id>`): the call, then its result appended. */
export type ToolCallData = { type: typeof TOOL_CALL_EVENT } & ToolCallReport;
export type ToolResultData = { type: typeof TOOL_RESULT_EVENT } & ToolResultReport;
