/**
 * The orchestrator protocol (docs/protocol.md §5): what an orchestrator graph — run in-process by the `local`
 * backend or on a LangGraph server by the `langgraph` backend — is given, what it reports while it
 * runs, how it asks the client (approval gates, client-side tools), and the data parts those become on
 * the A2A side. Free of A2A's wire types and of LangGraph, so the server, both backends and the graph
 * share it.
 */

import {
  PLAN_DATA_TYPE,
  TOOL_CALL_EVENT,
  TOOL_RESULT_EVENT,
  type ClientMethod,
  type PlanEntry,
  type ToolCallReport,
  type ToolResultReport,
} from '@cleveragents/contract';
import { MAX_WORKSPACE_ROOT_LENGTH, type Gate } from '@cleveragents/contract';

// The wire shapes (data parts, plan entries, client calls) are the contract both sides share.
export * from '@cleveragents/contract';

/** Automation profile gates: `manual` approves the plan and every tool call, `supervised` the plan and tools off its allow-list. */
export type { Gate };

/** The gates a turn runs under, from the session's (or plan's) automation profile. */
export interface TurnPolicy {
  gate: Gate;
  /** `supervised`: tools (by the name the model sees) that run without approval. */
  allowedTools: readonly string[];
  /** Tools asked about under any gate: the client asked for it (`cleveragents/gates` `ask`). */
  askedTools?: readonly string[];
}

/** A tool offered to the model. */
export interface OrchestratorTool {
  /** As the model sees it (`^[a-z0-9_-]+$`): `update_plan`, `fs_read_text_file`, … */
  name: string;
  description: string;
  /** JSON Schema of the tool's arguments (an object). */
  inputSchema: Record<string, unknown>;
  /**
   * `server`: the graph runs it itself (`update_plan`); `client`: a client-request with `clientMethod`;
   * `agent`: an external A2A agent of the registry (an actor with `a2a`), called with `{message}`.
   */
  runsOn: 'server' | 'client' | 'agent';
  clientMethod?: ClientMethod;
}

/** The arguments of a sub-agent call, as the model sees them. */
export const AGENT_TOOL_SCHEMA: Record<string, unknown> = {
  type: 'object',
  properties: { message: { type: 'string', description: 'What to ask or tell the agent' } },
  required: ['message'],
};

/** What a sub-agent call gave back: the agent's answer and its other artifacts, or how its task rested. */
export interface AgentCallResult {
  state: 'completed' | 'input-required' | 'failed' | 'rejected' | 'canceled';
  answer: string;
  artifacts: { name: string; parts: unknown[] }[];
}

/** Line breaks, other control characters and bidirectional overrides: none reaches a prompt from a client's text. */
const UNPROMPTABLE = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;

/**
 * A workspace root as a client reported it, made fit to quote in a prompt: its control characters (line
 * breaks first) dropped, at most MAX_WORKSPACE_ROOT_LENGTH characters. It stays the client's word, never
 * an instruction: the prompt quotes it.
 */
export function promptableWorkspaceRoot(reported: string): string {
  return reported.replace(UNPROMPTABLE, '').slice(0, MAX_WORKSPACE_ROOT_LENGTH);
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
  /** The root of the client's workspace, as the client reported it (made promptable: promptableWorkspaceRoot). */
  workspace?: string;
}

/** What the graph reports while it runs (LangGraph's `custom` stream mode), besides message tokens. */
export const USAGE_EVENT = 'cleveragents/usage';

export type OrchestratorEvent =
  /** The plan as it now stands (the whole entry list). */
  | { type: typeof PLAN_DATA_TYPE; entries: PlanEntry[] }
  | ({ type: typeof TOOL_CALL_EVENT } & ToolCallReport)
  | ({ type: typeof TOOL_RESULT_EVENT } & ToolResultReport)
  /** Tokens a model call used (prompt and completion), counted against the token budget. */
  | { type: typeof USAGE_EVENT; tokens: number };

/** How a run ended when the client rejected the plan at its gate: the graph's state holds this. */
export interface PlanRejection {
  reason: string;
}
