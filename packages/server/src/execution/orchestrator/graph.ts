import { randomUUID } from 'node:crypto';
import { context } from '@opentelemetry/api';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { RemoveMessage, ToolMessage, type AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import {
  Annotation,
  END,
  interrupt,
  isGraphBubbleUp,
  MessagesAnnotation,
  REMOVE_ALL_MESSAGES,
  START,
  StateGraph,
  type LangGraphRunnableConfig,
} from '@langchain/langgraph';
import { DEFAULT_CONTEXT_TOKENS, DEFAULT_SYSTEM_PROMPT, fitContext, messageText } from '../context-window.js';
import { estimateTokens } from '../turn-values.js';
import {
  APPROVAL_REQUEST_TYPE,
  CLIENT_REQUEST_TYPE,
  isTerminalFollowUp,
  PLAN_DATA_TYPE,
  TOOL_CALL_EVENT,
  TOOL_RESULT_EVENT,
  UPDATE_PLAN_TOOL,
  USAGE_EVENT,
  type AgentCallResult,
  type ApprovalRequest,
  type ApprovalResponse,
  type ClientRequest,
  type ClientResponse,
  type OrchestratorEvent,
  type OrchestratorSetup,
  type OrchestratorTool,
  type PlanEntry,
  type PlanRejection,
} from './protocol.js';
import { orchestratorPrompt, validatePlanEntries } from './instructions.js';
import {
  targetOfModel,
  ToolCallSpan,
  tracedModelCall,
  withCallback,
  type ModelCallRecord,
  type ModelCallTarget,
} from './telemetry.js';

/**
 * The orchestrator graph (docs/protocol.md §5): plan → approval gate → steps with tools, pure LangGraph.js
 * (docs/design-notes.md#orchestrator-graph).
 */

// Moved to instructions.ts; still exported from here, as they always were.
export {
  ORCHESTRATOR_INSTRUCTIONS,
  orchestratorPrompt,
  PLANNING_RULE,
  validatePlanEntries,
  workspaceInstructions,
} from './instructions.js';

/** The node that asks the model for the next step. */
export const AGENT_NODE = 'agent';
/** The node that runs the tool calls of the model's last answer. */
export const TOOLS_NODE = 'tools';
/** The node a new input passes first: sets the plan state up for a new setup. */
export const BEGIN_NODE = 'begin';

/**
 * Whatever the model call failed with (its `cause`): an HTTP or connection error, or an answer that
 * could not be read (a web page, other JSON, broken events), so the backend reports every one alike.
 */
export class ModelCallError extends Error {
  override readonly name = 'ModelCallError';

  constructor(cause: unknown) {
    super(`the model call failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** The rejection reason of a plan the client rejected. */
export const PLAN_REJECTED_REASON = 'The client rejected the plan';
/** What the model is told when the client rejects a tool call. */
export const TOOL_REJECTED_MESSAGE = 'The call was rejected by the user';
/** What a call waiting at its gate or on the client is answered when the person sends a new message instead. */
export const NOT_RUN_NEW_MESSAGE = 'not run: the person sent a new message instead of answering it';

/** A rejection's reason as the person gave it (ApprovalResponse.reason), when there is one to pass on. */
function reasonOf(response: Partial<ApprovalResponse> | undefined): string | undefined {
  const reason = isRecord(response) && typeof response.reason === 'string' ? response.reason.trim() : '';
  return reason === '' ? undefined : reason;
}

/**
 * Why the plan was rejected, with the answer's reason when it gave one: a person's words, or the server's when
 * the profile's approval timeout denied it (so the wording names no one).
 */
export function planRejectedReason(reason: string | undefined): string {
  return reason ? `The plan was rejected: ${reason}` : PLAN_REJECTED_REASON;
}

/** What the model is told of a tool call that was denied, with the answer's reason (a person's, or a timeout's). */
export function toolRejectedMessage(reason: string | undefined): string {
  return reason ? `This call was denied: ${reason}` : TOOL_REJECTED_MESSAGE;
}

/**
 * The results owed to the last model answer's tool calls that have none (its run waited at a gate or on the
 * client, and the person sent a new message instead): each is answered NOT_RUN_NEW_MESSAGE, so that the
 * next model call sees every call followed by its result.
 */
export function unansweredCallResults(messages: readonly BaseMessage[]): ToolMessage[] {
  const index = messages.findLastIndex((message) => message.type === 'ai');
  if (index < 0) return [];
  const calls = (messages[index] as AIMessage).tool_calls ?? [];
  const answered = new Set(
    messages
      .slice(index + 1)
      .flatMap((message) => (message.type === 'tool' ? [(message as ToolMessage).tool_call_id] : [])),
  );
  return calls
    .filter((call) => call.id !== undefined && !answered.has(call.id))
    .map(
      (call) =>
        new ToolMessage({
          id: `not-run-${call.id as string}`,
          tool_call_id: call.id as string,
          name: call.name,
          content: `Error: ${NOT_RUN_NEW_MESSAGE}`,
          status: 'error',
        }),
    );
}

/** The setup as the state keeps it: `generation` counts the setups given, so a new one resets the plan. */
export type SetupState = OrchestratorSetup & { generation?: number };

export const OrchestratorState = Annotation.Root({
  ...MessagesAnnotation.spec,
  /** From the task's first input; an input without setup keeps the one there. */
  setup: Annotation<SetupState | null, OrchestratorSetup | null | undefined>({
    // Never undefined (LangGraph would store a first update as is, without the generation).
    reducer: (current, update) => (update ? { ...update, generation: (current?.generation ?? 0) + 1 } : current),
    default: () => null,
  }),
  /** The plan as it now stands (the whole entry list). */
  plan: Annotation<PlanEntry[]>({ reducer: (_, update) => update, default: () => [] }),
  /** The plan passed its gate (or came approved with the setup). */
  planApproved: Annotation<boolean>({ reducer: (_, update) => update, default: () => false }),
  /** Set when the client rejected the plan: the run ended there. */
  rejection: Annotation<PlanRejection | null>({ reducer: (_, update) => update, default: () => null }),
  /** The setup generation the plan state belongs to. */
  planGeneration: Annotation<number>({ reducer: (_, update) => update, default: () => 0 }),
  /**
   * The terminals the person allowed: made by a `terminal_create` that passed its gate (or had none to
   * pass). What acts on one of them afterwards (its output, exit, kill, release) is never asked about.
   */
  terminals: Annotation<string[]>({ reducer: (_, update) => update, default: () => [] }),
});

export type OrchestratorStateValue = typeof OrchestratorState.State;
export type OrchestratorInput = typeof OrchestratorState.Update;

/**
 * What a run may give the graph besides its state (LangGraph's `context`, never checkpointed). The
 * `local` backend gives all of it; a run on a LangGraph server may give none (the factory's are used).
 */
export interface OrchestratorContext {
  model?: BaseChatModel;
  /** The actor's prompt (DEFAULT_SYSTEM_PROMPT unless given). */
  systemPrompt?: string;
  /** The prompt-side token budget of one model call (DEFAULT_CONTEXT_TOKENS unless given). */
  contextTokens?: number;
  /** Calls an `agent` tool: the external A2A agent `name`, sent `message` (the `local` backend gives it). */
  callAgent?: (name: string, message: string, callId: string) => Promise<AgentCallResult>;
  /** The model's provider, name, settings and endpoint, as its `chat` spans say them; read from the model unless given. */
  modelTarget?: ModelCallTarget;
  /** Told of each model call once it answered or failed (the `local` backend's metrics). */
  onModelCall?: (call: ModelCallRecord) => void;
}

/**
 * Sub-agent results by thread and call id: LangGraph runs a node again from its start when it resumes
 * after an interrupt, and an agent call made before that interrupt is not made twice in this process.
 */
const agentResults = new Map<string, AgentCallResult>();
const MAX_AGENT_RESULTS = 1000;

export interface OrchestratorGraphOptions extends OrchestratorContext {
  /** Where runs are checkpointed; a LangGraph server brings its own, so none is needed there. */
  checkpointer?: BaseCheckpointSaver;
}

type Writer = (event: OrchestratorEvent) => void;

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** How many allowed terminals a thread remembers (the most recent); a client keeps far fewer open. */
const MAX_ALLOWED_TERMINALS = 1000;
const MAX_TERMINAL_ID_LENGTH = 200;

/** The terminal id a client's `terminal/create` result gave, when it is one. */
function createdTerminalId(result: unknown): string | undefined {
  const id = isRecord(result) ? result.terminalId : undefined;
  return typeof id === 'string' && id !== '' && id.length <= MAX_TERMINAL_ID_LENGTH ? id : undefined;
}

/** OpenAI-style function tools for `bindTools`. */
function functionTools(tools: readonly OrchestratorTool[]) {
  return tools.map((tool) => ({
    type: 'function' as const,
    function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
  }));
}

/**
 * How many interrupts of this node's task were answered before this execution started. LangGraph runs
 * a node again from its start when it resumes; what the node reported before an answered interrupt
 * was reported by an earlier execution already. Zero when LangGraph's scratchpad is not there.
 */
function answeredInterrupts(config: LangGraphRunnableConfig): number {
  const scratchpad = (config.configurable as Record<string, unknown> | undefined)?.__pregel_scratchpad as
    { resume?: unknown[]; nullResume?: unknown } | undefined;
  if (!scratchpad || !Array.isArray(scratchpad.resume)) return 0;
  return scratchpad.resume.length + (scratchpad.nullResume !== undefined ? 1 : 0);
}

function lastAiMessage(messages: readonly BaseMessage[]): AIMessage | undefined {
  const last = messages.at(-1);
  return last?.type === 'ai' ? (last as AIMessage) : undefined;
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

function errorText(error: { code?: number; message: string }): string {
  return error.code === undefined ? error.message : `${error.message} (code ${error.code})`;
}

/**
 * The thread's messages with the results owed to the calls of the last model answer put before the new
 * message that ends them (a person who typed on instead of answering); undefined when none is owed.
 */
export function withPendingCallsAnswered(messages: readonly BaseMessage[]): BaseMessage[] | undefined {
  const last = messages.at(-1);
  if (last?.type !== 'human') return undefined;
  const before = messages.slice(0, -1);
  const owed = unansweredCallResults(before);
  return owed.length === 0 ? undefined : [...before, ...owed, last];
}

/**
 * Builds the orchestrator graph. The model comes from the run's `context.model` when given (the
 * `local` backend), else from `options.model` (a LangGraph deployment, a test fixture).
 */
export function buildOrchestratorGraph(options: OrchestratorGraphOptions = {}) {
  function contextOf(config: LangGraphRunnableConfig) {
    const context = (config.context ?? {}) as OrchestratorContext;
    const model = context.model ?? options.model;
    if (!model) throw new Error('The orchestrator graph has no model: give one to the factory or in the run context');
    return {
      model,
      systemPrompt: context.systemPrompt ?? options.systemPrompt ?? DEFAULT_SYSTEM_PROMPT,
      contextTokens: context.contextTokens ?? options.contextTokens ?? DEFAULT_CONTEXT_TOKENS,
      modelTarget: context.modelTarget ?? options.modelTarget ?? targetOfModel(model),
      onModelCall: context.onModelCall ?? options.onModelCall,
    };
  }

  function writerOf(config: LangGraphRunnableConfig): Writer {
    return (event) => config.writer?.(event);
  }

  /**
   * A new input: a new setup starts its plan state over; a new message is never a rejected run, and comes
   * after the results owed to calls the last run left waiting (withPendingCallsAnswered).
   */
  function begin(state: OrchestratorStateValue): Partial<OrchestratorInput> {
    const answered = withPendingCallsAnswered(state.messages);
    // The list is written anew (same ids) so that the results come before the message, not after it.
    const messages = answered ? { messages: [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...answered] } : {};
    const generation = state.setup?.generation ?? 0;
    if (generation === state.planGeneration) return { rejection: null, ...messages };
    const plan = state.setup?.plan;
    return {
      ...messages,
      rejection: null,
      planGeneration: generation,
      plan: plan ? plan.entries : [],
      planApproved: plan?.approved ?? false,
    };
  }

  async function agent(state: OrchestratorStateValue, config: LangGraphRunnableConfig) {
    const { model, systemPrompt, contextTokens, modelTarget, onModelCall } = contextOf(config);
    const tools = state.setup?.tools ?? [];
    const window = fitContext(orchestratorPrompt(systemPrompt, state.setup), state.messages, contextTokens);
    let runnable: Pick<BaseChatModel, 'invoke'> = model;
    if (tools.length > 0) {
      if (!model.bindTools) throw new Error('The orchestrator model cannot call tools');
      runnable = model.bindTools(functionTools(tools));
    }
    let answer: Awaited<ReturnType<typeof runnable.invoke>>;
    try {
      answer = (await tracedModelCall(
        modelTarget,
        window.messages,
        async (handler) => await runnable.invoke(window.messages, withCallback(config, handler)),
        onModelCall,
      )) as typeof answer;
    } catch (error) {
      // LangGraph's own control flow (an interrupt) passes as it is.
      throw isGraphBubbleUp(error) ? error : new ModelCallError(error);
    }
    // The messages reducer replaces a message whose id it holds, and endpoints are not all careful to
    // answer with unique ids: a repeated one gets an id of its own rather than overwrite an earlier answer.
    if (answer.id && state.messages.some((message) => message.id === answer.id)) answer.id = `ai-${randomUUID()}`;
    const reported = (answer as AIMessage).usage_metadata?.total_tokens;
    const tokens =
      typeof reported === 'number' && reported > 0
        ? reported
        : window.estimatedTokens +
          estimateTokens(messageText(answer)) +
          estimateTokens(JSON.stringify((answer as AIMessage).tool_calls ?? []));
    writerOf(config)({ type: USAGE_EVENT, tokens });
    return { messages: [answer] };
  }

  async function tools(state: OrchestratorStateValue, config: LangGraphRunnableConfig) {
    const calls = lastAiMessage(state.messages)?.tool_calls ?? [];
    const setup = state.setup;
    const offered = new Map((setup?.tools ?? []).map((tool) => [tool.name, tool]));
    const gate = setup?.policy.gate ?? 'autonomous';
    const allowed = new Set(setup?.policy.allowedTools ?? []);
    const askedFor = new Set(setup?.policy.askedTools ?? []);
    const write = writerOf(config);
    // Reports before an interrupt already answered were made by an earlier execution of this node.
    const answered = answeredInterrupts(config);
    let asked = 0;
    const report = (event: OrchestratorEvent) => {
      if (asked >= answered) write(event);
    };
    const ask = <T>(value: ApprovalRequest | ClientRequest): T => {
      asked += 1;
      return interrupt<ApprovalRequest | ClientRequest, T>(value);
    };

    let plan = state.plan;
    let planApproved = state.planApproved;
    const terminals = new Set(state.terminals);
    const allowedTerminals = () => [...terminals].slice(-MAX_ALLOWED_TERMINALS);
    const messages: ToolMessage[] = [];
    // The span of the call being worked on (telemetry.ts): ended by the call's result, whatever it is.
    let span: ToolCallSpan | undefined;
    const live = () => asked >= answered;
    /** How a result ends the call's span: `ok` or `error` by its status unless said; the error's type and message. */
    type Traced = { outcome?: 'rejected'; errorType?: string; message?: string; result?: unknown };
    const toolResult = (
      id: string,
      name: string,
      content: string,
      status: 'success' | 'error' = 'success',
      traced: Traced = {},
    ) => {
      messages.push(new ToolMessage({ tool_call_id: id, name, content, status }));
      if (span?.id !== id) return;
      const { outcome, ...detail } = traced;
      span.finish(
        outcome ?? (status === 'success' ? 'ok' : 'error'),
        'result' in detail ? detail : { ...detail, result: content },
      );
    };
    /** A call that failed; `notRunArgs` when it never ran (then no call was reported before). */
    const toolError = (
      id: string,
      name: string,
      error: { code?: number; message: string },
      notRunArgs?: Record<string, unknown>,
      traced: Traced = {},
    ) => {
      report({ type: TOOL_RESULT_EVENT, id, name, error, ...(notRunArgs ? { notRun: { args: notRunArgs } } : {}) });
      toolResult(id, name, `Error: ${errorText(error)}`, 'error', { result: error, ...traced });
    };

    for (const call of calls) {
      const id = call.id ?? `${call.name}-${messages.length}`;
      const tool = offered.get(call.name);
      const args = isRecord(call.args) ? call.args : {};
      span = new ToolCallSpan(id, call.name, tool?.runsOn, live, args);
      try {
        if (!tool) {
          toolError(
            id,
            call.name,
            { message: `The tool ${call.name} is not offered here; use only the tools given` },
            args,
            { errorType: 'tool_not_offered', message: 'the model called a tool not offered' },
          );
          continue;
        }
        if (tool.name === UPDATE_PLAN_TOOL) {
          const checked = validatePlanEntries(args.entries);
          if ('error' in checked) {
            toolResult(id, call.name, `Error: invalid plan: ${checked.error}`, 'error', {
              errorType: 'invalid_arguments',
              message: 'invalid plan',
            });
            continue;
          }
          let entries = checked.entries;
          if (!planApproved && gate !== 'autonomous') {
            // Shown before it is asked for (the server keeps it as a draft), then again once approved.
            report({ type: PLAN_DATA_TYPE, entries });
            const response = ask<Partial<ApprovalResponse> | undefined>({
              type: APPROVAL_REQUEST_TYPE,
              requestId: `approve-${id}`,
              subject: { kind: 'plan', entries },
              options: ['approve', 'reject', 'edit'],
            });
            const decision = isRecord(response) ? response.decision : undefined;
            if (decision === 'edit') {
              const edited = validatePlanEntries(response?.edited);
              if ('error' in edited) {
                toolResult(
                  id,
                  call.name,
                  `Error: the edited plan was invalid (${edited.error}); make the plan again`,
                  'error',
                  { errorType: 'invalid_arguments', message: 'the edited plan was invalid' },
                );
                continue;
              }
              entries = edited.entries;
            } else if (decision !== 'approve') {
              // Rejected (or answered with anything but approve/edit): the run ends here, nothing else runs.
              // Every call still gets its result, so that a later message's model call sees a whole exchange.
              const reason = planRejectedReason(reasonOf(response));
              for (const left of calls.slice(calls.indexOf(call))) {
                toolResult(left.id ?? '', left.name, `Error: not run: ${lowerFirst(reason)}`, 'error', {
                  outcome: 'rejected',
                });
              }
              return { messages, terminals: allowedTerminals(), rejection: { reason } };
            }
          }
          planApproved = true;
          plan = entries;
          report({ type: PLAN_DATA_TYPE, entries });
          toolResult(id, call.name, 'Plan approved; carry it out, updating the entries with update_plan as you go.');
          continue;
        }
        const callAgent = (config.context as OrchestratorContext | undefined)?.callAgent;
        const runsHere =
          tool.runsOn === 'agent' ? callAgent !== undefined : tool.runsOn === 'client' && tool.clientMethod;
        if (!runsHere) {
          toolError(id, call.name, { message: `The tool ${call.name} cannot run here` }, args, {
            errorType: 'tool_unavailable',
            message: 'the tool cannot run here',
          });
          continue;
        }
        let runArgs = args;
        // A follow-up of a command the person allowed is part of that command: only for that terminal.
        const followUp =
          isTerminalFollowUp(tool.clientMethod) &&
          typeof args.terminalId === 'string' &&
          terminals.has(args.terminalId);
        const mustAsk =
          !followUp &&
          (gate === 'manual' || askedFor.has(tool.name) || (gate === 'supervised' && !allowed.has(tool.name)));
        if (mustAsk) {
          const response = ask<Partial<ApprovalResponse> | undefined>({
            type: APPROVAL_REQUEST_TYPE,
            requestId: `approve-${id}`,
            subject: { kind: 'tool', toolCallId: id, tool: tool.name, method: tool.clientMethod, args },
            options: ['approve', 'reject', 'edit'],
          });
          const decision = isRecord(response) ? response.decision : undefined;
          if (decision === 'edit' && isRecord(response?.edited)) {
            runArgs = response.edited;
          } else if (decision !== 'approve' && decision !== 'edit') {
            toolError(id, call.name, { message: toolRejectedMessage(reasonOf(response)) }, args, {
              outcome: 'rejected',
            });
            continue;
          }
        }
        report({ type: TOOL_CALL_EVENT, id, name: call.name, args: runArgs });
        span.open(runArgs);
        if (tool.runsOn === 'agent' && callAgent) {
          const message = typeof runArgs.message === 'string' ? runArgs.message : '';
          if (!message) {
            toolError(id, call.name, { message: 'Give the agent a message: {"message": "…"}' }, undefined, {
              errorType: 'invalid_arguments',
              message: 'no message for the agent',
            });
            continue;
          }
          const key = `${String(config.configurable?.thread_id)}\u0000${id}`;
          let result = agentResults.get(key);
          if (!result) {
            const calling = span;
            result = await context.with(calling.context(), () => callAgent(tool.name, message, id));
            if (agentResults.size >= MAX_AGENT_RESULTS) agentResults.clear();
            agentResults.set(key, result);
          }
          if (result.state === 'completed' || result.state === 'input-required') {
            report({ type: TOOL_RESULT_EVENT, id, name: call.name, result });
            toolResult(id, call.name, JSON.stringify(result), 'success', { result });
          } else {
            toolError(
              id,
              call.name,
              { message: `The agent's task ended ${result.state}: ${result.answer}` },
              undefined,
              { errorType: `agent_${result.state}`, message: `the agent's task ended ${result.state}` },
            );
          }
          continue;
        }
        if (!tool.clientMethod) continue; // checked above: a client tool has its method
        const response = ask<Partial<ClientResponse> | undefined>({
          type: CLIENT_REQUEST_TYPE,
          requests: [{ id, method: tool.clientMethod, params: runArgs }],
        });
        // The turn that brings the client's answer traces the call from here (telemetry.ts, ToolCallSpan).
        span.open(runArgs);
        const answer = (Array.isArray(response?.responses) ? response.responses : []).find(
          (entry) => isRecord(entry) && entry.id === id,
        );
        if (!answer) {
          toolError(id, call.name, { message: 'The client gave no result for this call' }, undefined, {
            errorType: 'no_client_result',
            message: 'the client gave no result',
          });
        } else if (isRecord(answer.error)) {
          const { code, message } = answer.error;
          toolError(
            id,
            call.name,
            {
              ...(typeof code === 'number' ? { code } : {}),
              message: typeof message === 'string' ? `The client failed: ${message}` : 'The client failed',
            },
            undefined,
            {
              errorType: 'client_error',
              message: typeof code === 'number' ? `the client failed (code ${code})` : 'the client failed',
            },
          );
        } else {
          const created = tool.clientMethod === 'terminal/create' ? createdTerminalId(answer.result) : undefined;
          if (created !== undefined) terminals.add(created);
          report({ type: TOOL_RESULT_EVENT, id, name: call.name, result: answer.result });
          toolResult(id, call.name, JSON.stringify(answer.result ?? null), 'success', {
            result: answer.result ?? null,
          });
        }
      } catch (error) {
        // An interrupt (a gate, the client's request) suspends the node here; anything else fails the call.
        span.stopped(error, isGraphBubbleUp(error));
        throw error;
      }
    }
    return { messages, plan, planApproved, terminals: allowedTerminals() };
  }

  return new StateGraph(OrchestratorState)
    .addNode(BEGIN_NODE, begin)
    .addNode(AGENT_NODE, agent)
    .addNode(TOOLS_NODE, tools)
    .addEdge(START, BEGIN_NODE)
    .addEdge(BEGIN_NODE, AGENT_NODE)
    .addConditionalEdges(
      AGENT_NODE,
      (state) => ((lastAiMessage(state.messages)?.tool_calls?.length ?? 0) > 0 ? TOOLS_NODE : END),
      [TOOLS_NODE, END],
    )
    .addConditionalEdges(TOOLS_NODE, (state) => (state.rejection ? END : AGENT_NODE), [AGENT_NODE, END])
    .compile({ checkpointer: options.checkpointer });
}

export type OrchestratorGraph = ReturnType<typeof buildOrchestratorGraph>;
