import { createHash, randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { HumanMessage, type AIMessage, type BaseMessage } from '@langchain/core/messages';
import { Command } from '@langchain/langgraph';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../config/app.config.js';
import type {
  AssembleRequest,
  ActorBackendReadiness,
  ActorDefinition,
  ActorTurn,
  AssembledContext,
  TurnBackend,
  TurnResult,
} from '../actor-turn.js';
import {
  createChatModel,
  describeModelError,
  modelReadiness,
  resolveModelSettings,
  unconfiguredReason,
  type ChatModelFactory,
  type ModelSettings,
} from './chat-model.factory.js';
import { DEFAULT_CONTEXT_TOKENS, DEFAULT_SYSTEM_PROMPT, fitContext, messageText, roleOf } from '../context-window.js';
import { interruptQuestion, resumeValue } from '../turn-values.js';
import { KeyedSerializer, SerializedWorkAbortedError } from './keyed-serializer.js';
import {
  AGENT_NODE,
  buildOrchestratorGraph,
  ModelCallError,
  orchestratorPrompt,
  type OrchestratorGraph,
  type OrchestratorStateValue,
} from '../orchestrator/graph.js';
import { reportEvent } from '../orchestrator/report.js';
import { APPROVAL_RESPONSE_TYPE, CLIENT_RESPONSE_TYPE, type AgentCallResult } from '../orchestrator/protocol.js';
import { ExternalAgentBackend } from '../actor-backends.js';
import { CheckpointRepository } from './checkpoint.repository.js';
import { TypeOrmCheckpointSaver } from './typeorm-checkpoint.saver.js';
import { ModelEndpointGuard } from '../model-endpoint.guard.js';
import { ModelEndpointProbe } from './model-endpoint.probe.js';
import { causeOfType } from '../../common/causes.js';
import { Clock, SystemClock } from '../../common/clock.js';
import { OutboundUrlRefusal } from '../../common/outbound/outbound-url.policy.js';
import { isAborted } from '../../common/abort.js';
import { ModelMetrics } from '../model-metrics.js';
import { endpointOf, genAiProvider, type ModelCallRecord, type ModelCallTarget } from '../orchestrator/telemetry.js';

export interface LocalActorBackendOptions {
  /** Builds an actor's chat model; ChatOpenAI over the resolved endpoint unless given. */
  modelFor?: ChatModelFactory;
  /** The prompt-side token budget of a model call (default DEFAULT_CONTEXT_TOKENS). */
  contextTokens?: number;
}

/**
 * The graph thread of a session. Derived from the whole (namespace, owner, contextId) scope, so that
 * equal context ids of different owners or namespaces never share a conversation.
 */
export function threadIdFor(session: { namespace: string; owner: string; contextId: string }): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([session.namespace, session.owner, session.contextId]))
    .digest('hex');
  return `session:${digest}`;
}

/** What a run of the graph starts from: new messages, a Command, or null to resume the checkpoint. */
type GraphInput = Parameters<OrchestratorGraph['stream']>[0];

/** Where a recovered turn stands in its thread's latest checkpoint. */
type Recovery =
  | { kind: 'pending' } // the turn's message is in, nodes still to run: resume from the checkpoint
  | { kind: 'answered'; text: string } // the checkpoint already holds the answer
  | { kind: 'fresh' } // the message never reached the checkpoint: run it as a start
  | { kind: 'reply' } // an answer to an interrupt that still waits in the checkpoint: resume with it
  | { kind: 'settled' }; // an answer whose run got past its interrupt and ended: report how it ended

/** An approval- or client-response: an answer to an interrupt, never the person's text. */
function isResponse(value: Record<string, unknown>): boolean {
  return value.type === APPROVAL_RESPONSE_TYPE || value.type === CLIENT_RESPONSE_TYPE;
}

/**
 * The user's message as the graph stores it; its id is the A2A messageId, which recovery looks for. An
 * approval- or client-response in it is left out: it answers an interrupt or nothing, and is no text.
 */
function userMessage(turn: ActorTurn): HumanMessage {
  const data = turn.input.data.filter((value) => !isResponse(value)).map((value) => JSON.stringify(value));
  const parts = [turn.input.text, ...data].filter((p) => p !== '');
  return new HumanMessage({ id: userMessageId(turn), content: parts.join('\n\n') });
}

/** A reply that answers an interrupt no longer there (a newer message went on): it is no new message either. */
const NOTHING_WAITS = 'Nothing waits for this answer any more: a newer message in the session went on without it.';

function userMessageId(turn: ActorTurn): string {
  return turn.input.message.messageId || `task:${turn.taskId}`;
}

/** Whether the turn's message answers an interrupt (it carries an approval- or client-response). */
function isInterruptAnswer(turn: ActorTurn): boolean {
  return turn.input.data.some(isResponse);
}

/** An error the model endpoint answered (or failed to): described fully by describeModelError. */
function isModelApiError(error: unknown): boolean {
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status === 'number' || (error as { name?: unknown } | null)?.name === 'TimeoutError') return true;
  // A value made with Object.create(null) has no constructor.
  const constructor = (error as { constructor?: { name?: string } } | null | undefined)?.constructor;
  return /^APIConnection/.test(constructor?.name ?? '');
}

/** A failed model call for the log: an HTTP or connection failure as such, else what could not be read. */
function modelFailure(error: unknown, settings: ModelSettings): string {
  const described = describeModelError(error, settings);
  return isModelApiError(error)
    ? described
    : `${described} (${error instanceof Error ? error.message : String(error)})`;
}

/** The stable failure a caller sees when the model endpoint failed or was refused (docs/errors.md). */
function modelUnavailable(actor: string, correlationId: string): string {
  return (
    `MODEL_UNAVAILABLE: the model of actor "${actor}" is unavailable; ` +
    `the server log has the details (correlation id ${correlationId})`
  );
}

/** The guard's refusal in the error's causes, for the log: ": refused: url host … is not admitted". */
function refusalOf(error: unknown): string {
  const refusal = causeOfType(error, OutboundUrlRefusal);
  return refusal ? ` (refused: ${refusal.detail})` : '';
}

function errorDetail(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

/** Provider messages may echo the key; logs must not carry it either. */
function redact(text: string, secret: string | undefined): string {
  return secret ? text.split(secret).join('[redacted]') : text;
}

/** The model of a turn as its `chat` spans and metrics name it. */
function modelTargetOf(actor: ActorDefinition, settings: ModelSettings): ModelCallTarget {
  return {
    provider: genAiProvider(actor.model?.provider),
    model: settings.model,
    ...(typeof settings.temperature === 'number' ? { temperature: settings.temperature } : {}),
    ...(typeof settings.maxTokens === 'number' ? { maxTokens: settings.maxTokens } : {}),
    ...endpointOf(settings.baseUrl),
  };
}

/** A model answer that calls no tool: the end of a run's steps. */
function isFinalAnswer(message: BaseMessage): boolean {
  return message.type === 'ai' && ((message as AIMessage).tool_calls?.length ?? 0) === 0;
}

/** The final answer to message `index`: the last model answer after it that calls no tool, before the next user message. */
function answerAfter(messages: readonly BaseMessage[], index: number): BaseMessage | undefined {
  const end = messages.findIndex((message, i) => i > index && message.type === 'human');
  return messages.slice(index + 1, end < 0 ? undefined : end).findLast(isFinalAnswer);
}

/**
 * The `local` actor backend (docs/protocol.md §5): an in-process LangGraph.js orchestrator graph over an
 * OpenAI-compatible chat endpoint, checkpointed in the server's own database. A session is a graph
 * thread; its turns run one at a time. Tokens stream to the turn's output as the model produces
 * them; `signal` stops the model call; a turn cut off by a restart resumes from its checkpoint.
 */
@Injectable()
export class LocalActorBackend implements TurnBackend {
  readonly name = 'local' as const;
  private readonly logger = new Logger(LocalActorBackend.name);
  private readonly checkpointer: TypeOrmCheckpointSaver;
  private readonly graph: OrchestratorGraph;
  private readonly turns = new KeyedSerializer();
  private readonly modelFor: ChatModelFactory;
  private readonly contextTokens: number;
  private readonly endpoints: ModelEndpointGuard;
  /** Whether the configured endpoint answers; none when no complete endpoint is configured. */
  private readonly reachability: ModelEndpointProbe | undefined;

  constructor(
    dataSource: DataSource,
    private readonly config: AppConfig,
    /** Tests give their own model; the application none. */
    @Optional() options: LocalActorBackendOptions = {},
    @Optional() clock: Clock = new SystemClock(),
    /** Runs the actor's sub-agents (external A2A agents its `tools` name). */
    @Optional() @Inject(ExternalAgentBackend) private readonly agents?: ExternalAgentBackend,
    /** Tokens, cost and durations of the model calls (none in tests that build the backend alone). */
    @Optional() @Inject(ModelMetrics) private readonly modelMetrics?: ModelMetrics,
  ) {
    this.checkpointer = new TypeOrmCheckpointSaver(new CheckpointRepository(dataSource, config.turnOutageMs));
    this.graph = buildOrchestratorGraph({ checkpointer: this.checkpointer });
    this.modelFor = options.modelFor ?? createChatModel;
    this.contextTokens = options.contextTokens ?? DEFAULT_CONTEXT_TOKENS;
    this.endpoints = new ModelEndpointGuard(config);
    const { baseUrl, model, apiKey } = config.model;
    this.reachability =
      baseUrl && model
        ? new ModelEndpointProbe({ baseUrl, model, apiKey }, this.endpoints.fetchFor({}), clock)
        : undefined;
  }

  /** At start, once: a server without a model says so in its log, not only in /readyz. */
  start(): void {
    const configured = this.readiness();
    if (!configured.ready) {
      this.logger.warn(
        `${configured.detail}. Until then every task of an actor without its own model fails at once, ` +
          'and /readyz answers 503',
      );
    }
  }

  /** What the settings allow: a complete endpoint configured, or what to set. */
  readiness(): ActorBackendReadiness {
    return modelReadiness(this.config.model);
  }

  /** The settings, then whether the endpoint answers (cached; see ModelEndpointProbe). */
  async probe(): Promise<ActorBackendReadiness> {
    const configured = this.readiness();
    if (!configured.ready || !this.reachability) return configured;
    return this.reachability.check();
  }

  async run(turn: ActorTurn): Promise<TurnResult> {
    const resolved = resolveModelSettings(this.config.model, turn.actor);
    if (!resolved) return { state: 'failed', reason: unconfiguredReason(this.config.model, turn.actor) };
    // Every request of the model client is vetted and pinned, whoever wrote the actor and when.
    const settings = { ...resolved, fetch: this.endpoints.fetchFor(turn.actor) };
    if (turn.signal.aborted) return { state: 'canceled' };
    const threadId = threadIdFor(turn);
    try {
      return await this.turns.run(threadId, () => this.runOnThread(turn, threadId, settings), turn.signal);
    } catch (error) {
      if (error instanceof SerializedWorkAbortedError) return { state: 'canceled' };
      throw error;
    }
  }

  /** A sub-agent call of the graph: the agent must be one the actor's `tools` name. */
  private async callAgent(turn: ActorTurn, name: string, message: string, callId: string): Promise<AgentCallResult> {
    const agent = turn.subAgents?.[name];
    if (!agent || !this.agents) {
      return { state: 'failed', answer: `${name} is not an agent this actor may call`, artifacts: [] };
    }
    return await this.agents.ask(turn, agent, message, callId);
  }

  async assemble(session: AssembleRequest): Promise<AssembledContext> {
    const { messages, setup } = await this.threadValues(threadIdFor(session));
    const prompt = orchestratorPrompt(this.systemPrompt(session.actor), setup);
    const window = fitContext(prompt, messages, session.maxTokens ?? this.contextTokens);
    return {
      model: resolveModelSettings(this.config.model, session.actor)?.model ?? session.actor.model?.model,
      messages: window.messages.map((message) => ({ role: roleOf(message), content: messageText(message) })),
      estimatedTokens: window.estimatedTokens,
      omittedMessages: window.omittedMessages,
    };
  }

  private async runOnThread(turn: ActorTurn, threadId: string, settings: ModelSettings): Promise<TurnResult> {
    if (turn.signal.aborted) return { state: 'canceled' };
    const config = { configurable: { thread_id: threadId } };
    try {
      turn.output.working();
      let input: GraphInput;
      switch (turn.mode) {
        case 'start':
          input = { messages: [userMessage(turn)], setup: turn.setup };
          break;
        case 'resume':
          // With no interrupt waiting in the checkpoint there is nothing to answer: the reply is a new
          // message, unless it is an approval- or client-response, which is never text.
          if (await this.waitingInterrupt(threadId)) input = new Command({ resume: resumeValue(turn.input) });
          else if (isInterruptAnswer(turn)) return { state: 'failed', reason: NOTHING_WAITS };
          else input = { messages: [userMessage(turn)] };
          break;
        case 'recover': {
          const recovery = await this.recovery(threadId, turn);
          if (recovery.kind === 'answered') return { state: 'completed', text: recovery.text };
          if (recovery.kind === 'settled') return await this.outcome(threadId, turn);
          if (recovery.kind === 'pending') turn.output.restartText();
          if (recovery.kind === 'reply') input = new Command({ resume: resumeValue(turn.input) });
          else if (recovery.kind === 'pending') input = null;
          else input = { messages: [userMessage(turn)], setup: turn.setup };
          break;
        }
      }
      const stream = await this.graph.stream(input, {
        ...config,
        context: {
          model: this.modelFor(turn.actor, settings),
          systemPrompt: this.systemPrompt(turn.actor),
          contextTokens: this.contextTokens,
          callAgent: (name: string, message: string, callId: string) => this.callAgent(turn, name, message, callId),
          modelTarget: modelTargetOf(turn.actor, settings),
          onModelCall: (call: ModelCallRecord) => this.modelMetrics?.record(turn.namespace, turn.actor, call),
        },
        signal: turn.signal,
        streamMode: ['messages', 'custom'],
        // Each step's checkpoint is written before the next starts: what a restart resumes from.
        durability: 'sync',
      });
      // What each agent step streamed, and under which message id: when the graph gives an answer an id of
      // its own (its endpoint repeated one), LangGraph emits it once more, whole, under the new id.
      const streamed = new Map<unknown, { id: string | undefined; text: string }>();
      for await (const [mode, payload] of stream) {
        if (mode === 'custom') {
          reportEvent(turn.output, payload);
          continue;
        }
        const [chunk, metadata] = payload;
        if (metadata.langgraph_node !== AGENT_NODE || chunk.type !== 'ai') continue;
        const step = streamed.get(metadata.langgraph_step);
        if (step && step.id !== chunk.id && step.text !== '' && messageText(chunk) === step.text) continue;
        if (step) step.text += messageText(chunk);
        else streamed.set(metadata.langgraph_step, { id: chunk.id, text: messageText(chunk) });
        const delta = messageText(chunk);
        if (delta !== '') turn.output.text(delta);
      }
      return await this.outcome(threadId, turn);
    } catch (error) {
      if (isAborted(turn.signal)) return { state: 'canceled' };
      const modelError = causeOfType(error, ModelCallError);
      if (modelError || isModelApiError(error)) {
        // The caller learns no address, port, errno, status or what answered (no network probing); the log has them.
        const correlationId = randomUUID();
        const detail = redact(
          `${modelFailure(modelError?.cause ?? error, settings)}${refusalOf(error)}`,
          settings.apiKey,
        );
        this.logger.warn(
          `Task ${turn.taskId} (actor ${turn.actor.name}) failed: ${detail} (correlation id ${correlationId})`,
        );
        return { state: 'failed', reason: modelUnavailable(turn.actor.name, correlationId) };
      }
      this.logger.warn(`Task ${turn.taskId} (actor ${turn.actor.name}) failed unexpectedly`);
      this.logger.warn(redact(errorDetail(error), settings.apiKey));
      return { state: 'failed', reason: 'The local actor failed unexpectedly; the server log has the details' };
    }
  }

  /** How the run left the thread: waiting on an interrupt, or done with the last answer. */
  private async outcome(threadId: string, turn: ActorTurn): Promise<TurnResult> {
    const snapshot = await this.graph.getState({ configurable: { thread_id: threadId } });
    const interrupt = snapshot.tasks.flatMap((task) => task.interrupts).at(0);
    if (interrupt) return { state: 'input-required', text: interruptQuestion(interrupt.value), value: interrupt.value };
    const values = snapshot.values as Partial<OrchestratorStateValue>;
    if (values.rejection) return { state: 'rejected', reason: values.rejection.reason };
    const messages = values.messages ?? [];
    const index = messages.findIndex((message) => message.id === userMessageId(turn));
    const answer = index >= 0 ? answerAfter(messages, index) : messages.findLast(isFinalAnswer);
    return answer ? { state: 'completed', text: messageText(answer) } : { state: 'completed' };
  }

  private async waitingInterrupt(threadId: string): Promise<boolean> {
    const snapshot = await this.graph.getState({ configurable: { thread_id: threadId } });
    return snapshot.tasks.some((task) => task.interrupts.length > 0);
  }

  private async recovery(threadId: string, turn: ActorTurn): Promise<Recovery> {
    const snapshot = await this.graph.getState({ configurable: { thread_id: threadId } });
    const messages = (snapshot.values as { messages?: BaseMessage[] }).messages ?? [];
    const index = messages.findIndex((message) => message.id === userMessageId(turn));
    if (index < 0 && isInterruptAnswer(turn)) {
      // An approval- or client-response never becomes a message: where its run stands says what is left.
      if (snapshot.tasks.some((task) => task.interrupts.length > 0)) return { kind: 'reply' };
      return snapshot.next.length > 0 ? { kind: 'pending' } : { kind: 'settled' };
    }
    if (index < 0) return { kind: 'fresh' };
    if (snapshot.next.length > 0) return { kind: 'pending' };
    const answer = answerAfter(messages, index);
    // A message in the checkpoint with nothing pending and no answer: ask again (same id, so not doubled).
    return answer ? { kind: 'answered', text: messageText(answer) } : { kind: 'fresh' };
  }

  private async threadValues(threadId: string): Promise<Pick<OrchestratorStateValue, 'messages' | 'setup'>> {
    const snapshot = await this.graph.getState({ configurable: { thread_id: threadId } });
    const values = snapshot.values as Partial<OrchestratorStateValue>;
    return { messages: values.messages ?? [], setup: values.setup ?? null };
  }

  private systemPrompt(actor: ActorDefinition): string {
    return actor.systemPrompt?.trim() ? actor.systemPrompt : DEFAULT_SYSTEM_PROMPT;
  }
}
