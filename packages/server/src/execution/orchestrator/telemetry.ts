// The orchestrator graph's spans (docs/operations.md, "Traces"), on the OpenTelemetry API only: a `chat <model>`
// span per model call and an `execute_tool <tool>` span per tool call, as the GenAI semantic conventions name
// them. Both are children of the active span, the turn's `invoke_agent` span when the `local` backend runs the
// graph. Prompts, answers, tool arguments and results are recorded only with content capture on (content.ts).
import { context, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import type { Callbacks } from '@langchain/core/callbacks/manager';
import type { AIMessage, BaseMessage, ToolMessage } from '@langchain/core/messages';
import type { LLMResult } from '@langchain/core/outputs';
import {
  CA_TOOL_OUTCOME,
  CA_TOOL_RUNS_ON,
  ERROR_TYPE,
  GEN_AI_INPUT_MESSAGES,
  GEN_AI_OPERATION_NAME,
  GEN_AI_OUTPUT_MESSAGES,
  GEN_AI_PROVIDER_NAME,
  GEN_AI_REQUEST_MAX_TOKENS,
  GEN_AI_REQUEST_MODEL,
  GEN_AI_REQUEST_TEMPERATURE,
  GEN_AI_RESPONSE_FINISH_REASONS,
  GEN_AI_RESPONSE_ID,
  GEN_AI_RESPONSE_MODEL,
  GEN_AI_SYSTEM_INSTRUCTIONS,
  GEN_AI_TOOL_CALL_ARGUMENTS,
  GEN_AI_TOOL_CALL_ID,
  GEN_AI_TOOL_CALL_RESULT,
  GEN_AI_TOOL_NAME,
  GEN_AI_TOOL_TYPE,
  GEN_AI_USAGE_INPUT_TOKENS,
  GEN_AI_USAGE_OUTPUT_TOKENS,
  SERVER_ADDRESS,
  SERVER_PORT,
} from '../../telemetry/attributes.js';
import { captureContent, contentAttribute } from '../../telemetry/content.js';
import { serverTracer, setAttributes } from '../../telemetry/tracing.js';
import { contentText } from '../turn-values.js';

/** The model a call goes to, as its span and metrics name it. */
export interface ModelCallTarget {
  /** `gen_ai.provider.name`: `openai` for an OpenAI-compatible endpoint (what the client speaks). */
  provider: string;
  /** The model asked for. */
  model: string;
  temperature?: number;
  maxTokens?: number;
  /** The endpoint's host and port. */
  serverAddress?: string;
  serverPort?: number;
}

/** One model call as it went: for the caller's metrics (the `local` backend's). */
export interface ModelCallRecord {
  target: ModelCallTarget;
  durationSeconds: number;
  /** The model's own counts (its usage metadata); absent when the endpoint reported none. */
  inputTokens?: number;
  outputTokens?: number;
  responseModel?: string;
  /** Set when the call failed: its `error.type`. */
  errorType?: string;
}

/** `gen_ai.provider.name` of an actor's `model.provider`: the client speaks OpenAI's API to every one. */
export function genAiProvider(provider: string | null | undefined): string {
  return provider === 'azure-openai' ? 'azure.ai.openai' : 'openai';
}

/** The host and port of an endpoint URL (the scheme's port when it names none); {} for no URL. */
export function endpointOf(baseUrl: string | undefined): Pick<ModelCallTarget, 'serverAddress' | 'serverPort'> {
  if (!baseUrl) return {};
  try {
    const url = new URL(baseUrl);
    const port = url.port
      ? Number(url.port)
      : url.protocol === 'https:'
        ? 443
        : url.protocol === 'http:'
          ? 80
          : undefined;
    return { serverAddress: url.hostname.replace(/^\[|\]$/g, ''), serverPort: port };
  } catch {
    return {};
  }
}

/** What a chat model instance says of itself (a model given to the graph's factory, not by the backend). */
export function targetOfModel(model: object): ModelCallTarget {
  const fields = model as {
    model?: unknown;
    temperature?: unknown;
    maxTokens?: unknown;
    clientConfig?: { baseURL?: unknown };
  };
  const baseUrl = typeof fields.clientConfig?.baseURL === 'string' ? fields.clientConfig.baseURL : undefined;
  return {
    provider: 'openai',
    model: typeof fields.model === 'string' ? fields.model : 'unknown',
    ...(typeof fields.temperature === 'number' ? { temperature: fields.temperature } : {}),
    ...(typeof fields.maxTokens === 'number' && fields.maxTokens > 0 ? { maxTokens: fields.maxTokens } : {}),
    ...endpointOf(baseUrl),
  };
}

/** The GenAI conventions' role of a LangChain message. */
function roleOf(message: BaseMessage): string {
  switch (message.type) {
    case 'human':
      return 'user';
    case 'ai':
      return 'assistant';
    case 'system':
      return 'system';
    case 'tool':
      return 'tool';
    default:
      return 'user';
  }
}

/** `text` parsed as JSON when it is an object or array, else as it is. */
function parsedOr(text: string): unknown {
  if (!/^\s*[[{]/.test(text)) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** A message as the GenAI conventions' `{role, parts}`: text, tool calls, a tool's response. */
function conventionMessage(message: BaseMessage, finishReason?: string): Record<string, unknown> {
  const parts: Record<string, unknown>[] = [];
  const text = contentText(message.content);
  if (message.type === 'tool') {
    // Parsed when it is JSON (a result as the graph wrote it), so that a secret under its key is redacted.
    parts.push({ type: 'tool_call_response', id: (message as ToolMessage).tool_call_id, response: parsedOr(text) });
  } else if (text !== '') parts.push({ type: 'text', content: text });
  for (const call of (message as AIMessage).tool_calls ?? []) {
    parts.push({ type: 'tool_call', id: call.id, name: call.name, arguments: call.args });
  }
  return { role: roleOf(message), parts, ...(finishReason ? { finish_reason: finishReason } : {}) };
}

/**
 * `config` with `handler` added to its callbacks for this call only (not its children): how the model's
 * generation info (finish reason, response model) is read, which a streamed answer's message leaves out.
 */
export function withCallback<C extends { callbacks?: Callbacks }>(config: C, handler: BaseCallbackHandler): C {
  const callbacks = config.callbacks;
  let merged: Callbacks;
  if (!callbacks) merged = [handler];
  else if (Array.isArray(callbacks)) merged = [...callbacks, handler];
  else merged = callbacks.copy([handler], false);
  return { ...config, callbacks: merged };
}

/** The response's metadata fields, whatever the client library put there (message, then generation info). */
function responseOf(
  answer: AIMessage,
  generation: Record<string, unknown> | undefined,
): { id?: string; model?: string; finishReason?: string } {
  const metadata = { ...generation, ...answer.response_metadata } as Record<string, unknown>;
  const string = (value: unknown): string | undefined =>
    typeof value === 'string' && value !== '' ? value : undefined;
  return {
    id: string(metadata.id) ?? string(answer.id),
    model: string(metadata.model_name) ?? string(metadata.model),
    finishReason: string(metadata.finish_reason) ?? string(metadata.finishReason),
  };
}

/** A model failure's `error.type` and a status message that carries nothing the provider wrote (it may echo a key). */
function modelFailure(error: unknown): { type: string; message: string } {
  const status = (error as { status?: unknown } | null)?.status;
  const name = (error as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  const type = typeof name === 'string' && name !== '' && name !== 'Object' ? name : 'Error';
  if (typeof status === 'number') return { type, message: `the model endpoint answered HTTP ${status}` };
  return { type, message: `the model call failed (${type})` };
}

/**
 * Runs one model call inside its `chat <model>` span (kind CLIENT) and tells `record` how it went. The
 * span is the active one while the call runs. A throw marks the span failed and is rethrown.
 */
export async function tracedModelCall(
  target: ModelCallTarget,
  messages: readonly BaseMessage[],
  invoke: (handler: BaseCallbackHandler) => Promise<AIMessage>,
  record?: (call: ModelCallRecord) => void,
): Promise<AIMessage> {
  const started = performance.now();
  const span = serverTracer().startSpan(`chat ${target.model}`, {
    kind: SpanKind.CLIENT,
    attributes: {
      [GEN_AI_OPERATION_NAME]: 'chat',
      [GEN_AI_PROVIDER_NAME]: target.provider,
      [GEN_AI_REQUEST_MODEL]: target.model,
    },
  });
  setAttributes(span, {
    [GEN_AI_REQUEST_TEMPERATURE]: target.temperature,
    [GEN_AI_REQUEST_MAX_TOKENS]: target.maxTokens,
    [SERVER_ADDRESS]: target.serverAddress,
    [SERVER_PORT]: target.serverPort,
  });
  if (span.isRecording() && captureContent()) {
    const system = messages.filter((m) => m.type === 'system');
    const rest = messages.filter((m) => m.type !== 'system');
    if (system.length > 0) {
      span.setAttribute(
        GEN_AI_SYSTEM_INSTRUCTIONS,
        contentAttribute(system.map((m) => ({ type: 'text', content: contentText(m.content) }))),
      );
    }
    span.setAttribute(GEN_AI_INPUT_MESSAGES, contentAttribute(rest.map((m) => conventionMessage(m))));
  }
  const seconds = () => (performance.now() - started) / 1000;
  let generation: Record<string, unknown> | undefined;
  const handler = BaseCallbackHandler.fromMethods({
    // Awaited, so that it has run when the call resolves (LangChain may run handlers in the background).
    awaitHandlers: true,
    handleLLMEnd: (output: LLMResult) => {
      generation = output.generations[0]?.[0]?.generationInfo;
    },
  } as Parameters<typeof BaseCallbackHandler.fromMethods>[0]);
  let answer: AIMessage;
  try {
    answer = await context.with(trace.setSpan(context.active(), span), () => invoke(handler));
  } catch (error) {
    const failure = modelFailure(error);
    if (span.isRecording()) {
      span.setAttribute(ERROR_TYPE, failure.type);
      span.setStatus({ code: SpanStatusCode.ERROR, message: failure.message });
    }
    span.end();
    record?.({ target, durationSeconds: seconds(), errorType: failure.type });
    throw error;
  }
  const response = responseOf(answer, generation);
  const usage = answer.usage_metadata;
  const inputTokens = typeof usage?.input_tokens === 'number' ? usage.input_tokens : undefined;
  const outputTokens = typeof usage?.output_tokens === 'number' ? usage.output_tokens : undefined;
  setAttributes(span, {
    [GEN_AI_RESPONSE_ID]: response.id,
    [GEN_AI_RESPONSE_MODEL]: response.model,
    [GEN_AI_RESPONSE_FINISH_REASONS]: response.finishReason ? [response.finishReason] : undefined,
    [GEN_AI_USAGE_INPUT_TOKENS]: inputTokens,
    [GEN_AI_USAGE_OUTPUT_TOKENS]: outputTokens,
  });
  if (span.isRecording() && captureContent()) {
    span.setAttribute(GEN_AI_OUTPUT_MESSAGES, contentAttribute([conventionMessage(answer, response.finishReason)]));
  }
  span.end();
  record?.({ target, durationSeconds: seconds(), inputTokens, outputTokens, responseModel: response.model });
  return answer;
}

/** Where a tool call runs, as the orchestrator's tools say (OrchestratorTool.runsOn). */
export type ToolRunsOn = 'server' | 'client' | 'agent';

/**
 * `gen_ai.tool.type` (GenAI conventions): `function` for a tool the client runs with the arguments the
 * agent made (the client-side tools), `extension` for one the agent side runs itself (`update_plan`, an
 * A2A sub-agent). No tool of the orchestrator is a `datastore`.
 */
export function toolType(runsOn: ToolRunsOn | undefined): 'function' | 'extension' {
  return runsOn === 'client' ? 'function' : 'extension';
}

/** How a tool call ended in this turn (`cleveragents.tool.outcome`). */
export type ToolOutcome = 'ok' | 'error' | 'rejected' | 'awaiting_client';

/**
 * The `execute_tool <name>` span of one tool call, in the turn that works on it. It is opened lazily, and
 * only while `live()` (what the graph runs again after an answered interrupt, LangGraph's replay of a node,
 * was traced by the turn that first ran it). A call's approval gate is no part of it: it opens when the
 * call runs (after its gate) or ends without running (not offered, refused at its gate). A client-side
 * call hands its request to the client and suspends the turn (input-required): the asking turn's span ends
 * there with outcome `awaiting_client`, and the turn that brings the client's answer has a span of its own
 * for the same `gen_ai.tool.call.id`, ending `ok` or `error`.
 */
export class ToolCallSpan {
  private span: Span | undefined;
  private ended = false;

  constructor(
    readonly id: string,
    private readonly name: string,
    private readonly runsOn: ToolRunsOn | undefined,
    private readonly live: () => boolean,
    private args: Record<string, unknown>,
  ) {}

  /** Starts the span (a child of the active context), unless it is open already, ended, or not live. */
  open(args?: Record<string, unknown>): void {
    if (args) this.args = args;
    if (this.span || this.ended || !this.live()) return;
    this.span = serverTracer().startSpan(`execute_tool ${this.name}`, {
      kind: SpanKind.INTERNAL,
      attributes: {
        [GEN_AI_OPERATION_NAME]: 'execute_tool',
        [GEN_AI_TOOL_NAME]: this.name,
        [GEN_AI_TOOL_CALL_ID]: this.id,
        [GEN_AI_TOOL_TYPE]: toolType(this.runsOn),
        ...(this.runsOn ? { [CA_TOOL_RUNS_ON]: this.runsOn } : {}),
      },
    });
    if (this.span.isRecording() && captureContent()) {
      this.span.setAttribute(GEN_AI_TOOL_CALL_ARGUMENTS, contentAttribute(this.args));
    }
  }

  /** The active context with this span in it (the context a sub-agent call runs in). */
  context(): Context {
    return this.span ? trace.setSpan(context.active(), this.span) : context.active();
  }

  /**
   * Ends the span (opening it first when live): `ok` with the call's result, `error` with its `error.type`
   * and a message of the server's own, `rejected` (refused at its gate: no error of the tool), or
   * `awaiting_client`.
   */
  finish(outcome: ToolOutcome, detail: { result?: unknown; errorType?: string; message?: string } = {}): void {
    this.open();
    const span = this.span;
    if (!span || this.ended) return;
    this.ended = true;
    span.setAttribute(CA_TOOL_OUTCOME, outcome);
    if (outcome === 'error') {
      span.setAttribute(ERROR_TYPE, detail.errorType ?? 'tool_error');
      span.setStatus({ code: SpanStatusCode.ERROR, message: detail.message ?? 'the tool call failed' });
    }
    if (span.isRecording() && captureContent() && 'result' in detail) {
      span.setAttribute(GEN_AI_TOOL_CALL_RESULT, contentAttribute(detail.result ?? null));
    }
    span.end();
  }

  /** The node stopped inside this call: suspended for the client (an interrupt), or it threw. */
  stopped(error: unknown, interrupted: boolean): void {
    if (!this.span || this.ended) return;
    if (interrupted) {
      this.finish('awaiting_client');
      return;
    }
    const name = (error as { name?: unknown } | null)?.name;
    this.finish('error', {
      errorType: typeof name === 'string' && name !== '' ? name : 'Error',
      message: 'the tool call failed unexpectedly',
    });
  }
}
