/**
 * The data parts and metadata through which an orchestrated task talks with its client (docs/protocol.md §5), as
 * zod schemas: what the server sends is decoded with `z.object` (unknown keys dropped) and never trusted as it came.
 */
import { z } from 'zod';

export const PLAN_ENTRY_PRIORITIES = ['high', 'medium', 'low'] as const;
export const PlanEntryPriority = z.enum(PLAN_ENTRY_PRIORITIES);
export type PlanEntryPriority = z.infer<typeof PlanEntryPriority>;
export const PLAN_ENTRY_STATUSES = ['pending', 'in_progress', 'completed', 'failed', 'skipped'] as const;
export const PlanEntryStatus = z.enum(PLAN_ENTRY_STATUSES);
export type PlanEntryStatus = z.infer<typeof PlanEntryStatus>;
/** How many entries a plan may hold. */
export const MAX_PLAN_ENTRIES = 200;
/** How long one entry's text may be. */
export const MAX_PLAN_ENTRY_LENGTH = 2000;

/** One step of a plan, as ACP's plan entries: what to do, how much it matters, how far it is. */
export const PlanEntry = z.object({
  content: z.string().min(1).max(MAX_PLAN_ENTRY_LENGTH),
  priority: PlanEntryPriority,
  status: PlanEntryStatus,
});
export type PlanEntry = z.infer<typeof PlanEntry>;

/** A plan's entries, as many as a plan may hold. */
export const PlanEntries = z.array(PlanEntry).max(MAX_PLAN_ENTRIES);

/** An entry as a person edits it (an approval's `edited` plan): text trimmed, priority and status defaulted. */
const EDITED_CONTENT_RULE = `must be a non-empty text of at most ${MAX_PLAN_ENTRY_LENGTH} characters`;
export const EditedPlanEntry = z.object({
  content: z
    .string({ error: EDITED_CONTENT_RULE })
    .trim()
    .min(1, { error: EDITED_CONTENT_RULE })
    .max(MAX_PLAN_ENTRY_LENGTH, { error: EDITED_CONTENT_RULE }),
  priority: PlanEntryPriority.default('medium'),
  status: PlanEntryStatus.default('pending'),
});
export const EditedPlanEntries = z.array(EditedPlanEntry).max(MAX_PLAN_ENTRIES);

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
/** A value under SEQUENCE_KEY: a whole number from 1. */
export const SequenceNumber = z.int().min(1);

/** The SubscribeToTask (and v0.3 `tasks/resubscribe`) param naming the last sequence number a client saw. */
export const LAST_SEQUENCE_PARAM = 'lastSequence';

/** The longest workspace root a client may report (PATH_MAX on Linux). */
export const MAX_WORKSPACE_ROOT_LENGTH = 4096;

/**
 * What the client said it handles (`cleveragents/clientCapabilities` in message metadata), and the root
 * of the workspace its tools work in, as it reports it (the model is told it; the server trusts it no
 * further than as text: control characters are dropped before it reaches a prompt).
 */
export const ClientCapabilities = z.object({
  fs: z.object({ read: z.boolean(), write: z.boolean() }),
  terminal: z.boolean(),
  workspace: z.string().max(MAX_WORKSPACE_ROOT_LENGTH).optional(),
});
export type ClientCapabilities = z.infer<typeof ClientCapabilities>;

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
export const ClientMethod = z.enum(CLIENT_METHODS);
export type ClientMethod = z.infer<typeof ClientMethod>;

/**
 * The methods that act on a terminal `terminal/create` made: part of the command the person allowed, so
 * never asked about again for that terminal (docs/plans.md#gates), by the server's gate or by a client.
 */
export const TERMINAL_FOLLOW_UP_METHODS = [
  'terminal/output',
  'terminal/wait_for_exit',
  'terminal/kill',
  'terminal/release',
] as const satisfies readonly ClientMethod[];
export type TerminalFollowUpMethod = (typeof TERMINAL_FOLLOW_UP_METHODS)[number];

/**
 * Message metadata key: the gates a client asks the task its message starts to run under, which the server
 * narrows to what the session's profile permits (docs/plans.md#gates-a-client-asks-for).
 */
export const GATE_REQUEST_KEY = 'cleveragents/gates';
/** Tool names in a gate request, as the model sees them (registry names). */
const GATE_TOOL_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const GateTools = z
  .array(z.string().regex(GATE_TOOL_PATTERN, { error: 'must be a tool name: 1 to 64 of a-z, 0-9, "_" and "-"' }))
  .max(100);

/** `cleveragents/gates`: `allow` the tools to run without asking (as far as the profile lets a client), `ask` those to ask about. */
export const GateRequest = z
  .strictObject({ allow: GateTools.optional(), ask: GateTools.optional() })
  .superRefine((request, ctx) => {
    for (const [index, tool] of (request.ask ?? []).entries()) {
      if (request.allow?.includes(tool)) {
        ctx.addIssue({ code: 'custom', path: ['ask', index], message: 'is in allow too: a tool is allowed or asked' });
      }
    }
  });
export type GateRequest = z.infer<typeof GateRequest>;

/** Whether `method` is one of TERMINAL_FOLLOW_UP_METHODS. */
export function isTerminalFollowUp(method: unknown): method is TerminalFollowUpMethod {
  return (TERMINAL_FOLLOW_UP_METHODS as readonly unknown[]).includes(method);
}

const Arguments = z.record(z.string(), z.unknown());
const TerminalParams = z.object({ terminalId: z.string().min(1) });

/** The params of each client method, as ACP names them (a client may check more: confinement, limits). */
export const CLIENT_CALL_PARAMS = {
  'fs/read_text_file': z.object({
    path: z.string().min(1),
    line: z.int().min(1).nullish(),
    limit: z.int().min(1).nullish(),
  }),
  'fs/write_text_file': z.object({ path: z.string().min(1), content: z.string() }),
  'terminal/create': z.object({
    command: z.string().min(1),
    args: z.array(z.string()).nullish(),
    env: z.array(z.object({ name: z.string().min(1), value: z.string() })).nullish(),
    cwd: z.string().min(1).nullish(),
    outputByteLimit: z.int().min(1).nullish(),
  }),
  'terminal/output': TerminalParams,
  'terminal/wait_for_exit': TerminalParams,
  'terminal/kill': TerminalParams,
  'terminal/release': TerminalParams,
} as const satisfies Record<ClientMethod, z.ZodType>;

export const TOOL_CALL_EVENT = 'cleveragents/tool-call';
export const TOOL_RESULT_EVENT = 'cleveragents/tool-result';

export const ToolCallReport = z.object({
  /** The model's tool call id. */
  id: z.string(),
  name: z.string(),
  args: Arguments,
});
export type ToolCallReport = z.infer<typeof ToolCallReport>;

export const ToolResultReport = z.object({
  id: z.string(),
  name: z.string(),
  /** What the tool gave back (a client's `result`), when it succeeded. */
  result: z.unknown().optional(),
  /** Why it did not: the client's error, a rejected approval, an unknown tool. */
  error: z.object({ code: z.int().optional(), message: z.string() }).optional(),
  /**
   * Set when the call never ran — rejected at its gate, or a tool not offered or not runnable here — so
   * no call was reported before it: the arguments the model gave.
   */
  notRun: z.object({ args: Arguments }).optional(),
});
export type ToolResultReport = z.infer<typeof ToolResultReport>;

/** The longest reason a rejection may give. */
export const MAX_APPROVAL_REASON_LENGTH = 2000;

export const APPROVAL_DECISIONS = ['approve', 'reject', 'edit'] as const;
export const ApprovalDecision = z.enum(APPROVAL_DECISIONS);
export type ApprovalDecision = z.infer<typeof ApprovalDecision>;

export const ApprovalSubject = z.discriminatedUnion('kind', [
  /** The orchestrator's plan: `edit` replaces the entries with `edited` (an entry list). */
  z.object({ kind: z.literal('plan'), entries: PlanEntries }),
  /** A tool call: `edit` replaces its arguments with `edited` (an object). */
  z.object({
    kind: z.literal('tool'),
    toolCallId: z.string(),
    tool: z.string(),
    method: ClientMethod.optional(),
    args: Arguments,
  }),
  /**
   * An external A2A agent (an actor) asking for input: its own words, never a gate of the server's. `edit`
   * answers with `edited`, the message parts sent to the agent as they are; approve and reject send it a data
   * part `{decision, reason?}` (docs/execution.md, "a2a").
   */
  z.object({
    kind: z.literal('agent'),
    /** The actor that is the agent. */
    actor: z.string(),
    /** The origin (scheme, host, port) of the agent's URL. */
    origin: z.string(),
    /** The agent's own id of the task that waits. */
    remoteTaskId: z.string(),
    /** What the agent asked: the text of its status message. */
    text: z.string(),
    /** The first data part of its status message, if any, as it gave it. */
    data: z.unknown().optional(),
  }),
]);
export type ApprovalSubject = z.infer<typeof ApprovalSubject>;

/** An interrupt value: the task waits in `input-required` with this data part. */
/** What happens to a gate nobody answered in time: denied (the default), or left waiting, shown overdue. */
export const APPROVAL_TIMEOUT_ACTIONS = ['deny', 'keep-waiting'] as const;
export const ApprovalTimeoutAction = z.enum(APPROVAL_TIMEOUT_ACTIONS, {
  error: `onTimeout must be one of ${APPROVAL_TIMEOUT_ACTIONS.join(', ')}`,
});
export type ApprovalTimeoutAction = z.infer<typeof ApprovalTimeoutAction>;

export const ApprovalRequest = z.object({
  type: z.literal(APPROVAL_REQUEST_TYPE),
  requestId: z.string().min(1),
  subject: ApprovalSubject,
  options: z.array(ApprovalDecision).min(1),
  /** The server's record of this gate (`_cleveragents/approval/*`): any of the person's clients may answer it. */
  approvalId: z.string().optional(),
  /** When the gate's profile timeout runs out; absent without one. */
  expiresAt: z.string().optional(),
  /** What happens then: `deny` (the gate is answered as rejected) or `keep-waiting`; with `expiresAt`. */
  onTimeout: ApprovalTimeoutAction.optional(),
});
export type ApprovalRequest = z.infer<typeof ApprovalRequest>;

/** The client's answer (a data part of the SendMessage on the waiting task), the graph's resume value. */
export const ApprovalResponse = z.object({
  type: z.literal(APPROVAL_RESPONSE_TYPE),
  requestId: z.string(),
  decision: ApprovalDecision,
  edited: z.unknown().optional(),
  /** `reject`: why, in the person's words; the model is told it with the refusal. */
  reason: z.string().max(MAX_APPROVAL_REASON_LENGTH).optional(),
});
export type ApprovalResponse = z.infer<typeof ApprovalResponse>;

/** One call the client is asked to run: its params checked against its method's (CLIENT_CALL_PARAMS). */
export const ClientCall = z
  .object({
    /** Unique within the task; the response names it. */
    id: z.string().min(1),
    method: ClientMethod,
    params: Arguments,
  })
  .check((ctx) => {
    const parsed = CLIENT_CALL_PARAMS[ctx.value.method].safeParse(ctx.value.params);
    if (parsed.success) return;
    for (const issue of parsed.error.issues) {
      ctx.issues.push({ code: 'custom', message: issue.message, path: ['params', ...issue.path], input: ctx.value });
    }
  });
export type ClientCall = z.infer<typeof ClientCall>;

/** An interrupt value: the client must run these calls and answer with a client-response. */
export const ClientRequest = z
  .object({ type: z.literal(CLIENT_REQUEST_TYPE), requests: z.array(ClientCall).min(1) })
  .check((ctx) => {
    const seen = new Set<string>();
    ctx.value.requests.forEach((call, i) => {
      if (seen.has(call.id)) {
        ctx.issues.push({
          code: 'custom',
          message: 'repeats the id of an earlier call',
          path: ['requests', i, 'id'],
          input: ctx.value,
        });
      }
      seen.add(call.id);
    });
  });
export type ClientRequest = z.infer<typeof ClientRequest>;

/** What every call of a client-request names, whatever else is wrong with it: its id. */
export const ClientRequestIds = z.object({ requests: z.array(z.object({ id: z.string().min(1) })).min(1) });

export const ClientCallResult = z.object({
  id: z.string(),
  result: z.unknown().optional(),
  error: z.object({ code: z.int().optional(), message: z.string(), data: z.unknown().optional() }).optional(),
});
export type ClientCallResult = z.infer<typeof ClientCallResult>;

export const ClientResponse = z.object({
  type: z.literal(CLIENT_RESPONSE_TYPE),
  responses: z.array(ClientCallResult),
});
export type ClientResponse = z.infer<typeof ClientResponse>;

/** A plan's lifecycle states: draft → approved → executing ⇄ paused → completed | failed | canceled. */
export const PLAN_STATUSES = ['draft', 'approved', 'executing', 'paused', 'completed', 'failed', 'canceled'] as const;
export const PlanStatus = z.enum(PLAN_STATUSES);
export type PlanStatus = z.infer<typeof PlanStatus>;

/** A plan as a `cleveragents/plan` data part shows it in a task's status (`{type, plan}`). */
export const PlanDataView = z.object({
  planId: z.string().optional(),
  goal: z.string().optional(),
  status: PlanStatus.optional(),
  revision: z.int().min(0).optional(),
  entries: PlanEntries,
});
export type PlanDataView = z.infer<typeof PlanDataView>;

/** The `cleveragents/plan` data part. */
export const PlanDataPart = z.object({ type: z.literal(PLAN_DATA_TYPE), plan: PlanDataView });
export type PlanDataPart = z.infer<typeof PlanDataPart>;

/** A tool call's artifact (`name: tool-call`, `artifactId: tool-<call id>`): the call, then its result appended. */
export const ToolCallData = ToolCallReport.extend({ type: z.literal(TOOL_CALL_EVENT) });
export type ToolCallData = z.infer<typeof ToolCallData>;
export const ToolResultData = ToolResultReport.extend({ type: z.literal(TOOL_RESULT_EVENT) });
export type ToolResultData = z.infer<typeof ToolResultData>;
