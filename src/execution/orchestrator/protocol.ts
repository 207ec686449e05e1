/**
 * The orchestrator protocol (SPEC.md §5): what an orchestrator graph — run in-process by the `local`
 * backend or on a LangGraph server by the `langgraph` backend — is given, what it reports while it
 * runs, how it asks the client (approval gates, client-side tools), and the data parts those become on
 * the A2A side. Free of A2A's wire types and of LangGraph, so the server, both backends and the graph
 * share it.
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

/** Data-part `type`s (SPEC.md §5). */
export const PLAN_DATA_TYPE = 'cleveragents/plan';
export const APPROVAL_REQUEST_TYPE = 'cleveragents/approval-request';
export const APPROVAL_RESPONSE_TYPE = 'cleveragents/approval-response';
export const CLIENT_REQUEST_TYPE = 'cleveragents/client-request';
export const CLIENT_RESPONSE_TYPE = 'cleveragents/client-response';
/** Message metadata key under which a client declares the client-side tools it handles. */
export const CLIENT_CAPABILITIES_KEY = 'cleveragents/clientCapabilities';

/** Automation profile gates: `manual` approves the plan and every tool call, `supervised` the plan and tools off its allow-list. */
export type Gate = 'manual' | 'supervised' | 'autonomous';

/** The gates a turn runs under, from the session's (or plan's) automation profile. */
export interface TurnPolicy {
  gate: Gate;
  /** `supervised`: tools (by the name the model sees) that run without approval. */
  allowedTools: readonly string[];
}

/** What the client said it handles (`cleveragents/clientCapabilities` in message metadata). */
export interface ClientCapabilities {
  fs: { read: boolean; write: boolean };
  terminal: boolean;
}

export const NO_CLIENT_CAPABILITIES: ClientCapabilities = { fs: { read: false, write: false }, terminal: false };

/** The ACP-shaped client methods (SPEC.md §5). */
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

/** A tool offered to the model. */
export interface OrchestratorTool {
  /** As the model sees it (`^[a-z0-9_-]+$`): `update_plan`, `fs_read_text_file`, … */
  name: string;
  description: string;
  /** JSON Schema of the tool's arguments (an object). */
  inputSchema: Record<string, unknown>;
  /** `server`: the graph runs it itself (`update_plan`); `client`: a client-request with `clientMethod`. */
  runsOn: 'server' | 'client';
  clientMethod?: ClientMethod;
}

/** The built-in tool through which the orchestrator writes and updates its plan (the whole entry list). */
export const UPDATE_PLAN_TOOL = 'update_plan';

/** A plan handed to a turn: executing an approved plan (`plan/execute`), or the task's plan so far. */
export interface TurnPlanSetup {
  planId: string;
  goal: string;
  entries: PlanEntry[];
  /** The plan was approved (by `plan/approve` or at its gate): no plan gate again. */
  approved: boolean;
}

/**
 * What an orchestrator graph is given at the start of a task, besides the user's message: written into
 * the graph's state with the first input, so a resumed or recovered run keeps the same setup.
 */
export interface OrchestratorSetup {
  policy: TurnPolicy;
  /** `update_plan` and the client tools the client declared, in that order. */
  tools: OrchestratorTool[];
  plan?: TurnPlanSetup;
}

/** What the graph reports while it runs (LangGraph's `custom` stream mode), besides message tokens. */
export const TOOL_CALL_EVENT = 'cleveragents/tool-call';
export const TOOL_RESULT_EVENT = 'cleveragents/tool-result';
export const USAGE_EVENT = 'cleveragents/usage';

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

export type OrchestratorEvent =
  /** The plan as it now stands (the whole entry list). */
  | { type: typeof PLAN_DATA_TYPE; entries: PlanEntry[] }
  | ({ type: typeof TOOL_CALL_EVENT } & ToolCallReport)
  | ({ type: typeof TOOL_RESULT_EVENT } & ToolResultReport)
  /** Tokens a model call used (prompt and completion), counted against the token budget. */
  | { type: typeof USAGE_EVENT; tokens: number };

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

/** How a run ended when the client rejected the plan at its gate: the graph's state holds this. */
export interface PlanRejection {
  reason: string;
}
