import { createHash, randomUUID } from 'node:crypto';
import { Injectable, Logger, Optional } from '@nestjs/common';
import { Role, taskStateToJSON, type AgentCard, type Message, type Part, type TaskState } from '@a2a-js/sdk';
import { APPROVAL_RESPONSE_TYPE } from '@cleveragents/contract';
import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
  type Client,
  type TransportFactory,
} from '@a2a-js/sdk/client';
import { context, trace, type Span } from '@opentelemetry/api';
import { AppConfig } from '../../config/app.config.js';
import { SecretBox } from '../../common/secret-box.js';
import { isAborted } from '../../common/abort.js';
import {
  TURN_DETACHED,
  TURN_PAUSED,
  type ActorBackendReadiness,
  type ActorDefinition,
  type ActorTurn,
  type ArtifactChunk,
  type AssembledContext,
  type TurnBackend,
  type TurnResult,
} from '../actor-turn.js';
import { ModelEndpointGuard } from '../model-endpoint.guard.js';
import { boundedFetch } from '../../common/outbound/bounded-fetch.js';
import { OutboundMetrics } from '../../metrics/outbound-metrics.js';
import {
  CA_A2A_PROTOCOL_BINDING,
  CA_A2A_REMOTE_TASK_ID,
  CA_A2A_REMOTE_TASK_STATE,
  CA_ATTEMPT,
  CA_OUTCOME,
  CA_REJOIN_EVENT,
  GEN_AI_AGENT_NAME,
  GEN_AI_OPERATION_NAME,
  RPC_METHOD,
  RPC_SYSTEM,
} from '../../telemetry/attributes.js';
import {
  causeLinks,
  errorTypeOf,
  failOutbound,
  inClientSpan,
  remoteLabel,
  serverAttributes,
  tracingFetch,
  type ClientSpanOptions,
} from '../../telemetry/outbound.js';
import { setAttributes } from '../../telemetry/tracing.js';
import { openCredential, type StoredA2aAgent } from './a2a-credential.js';
import { authenticatingFetch, chooseAuth } from './a2a.auth.js';
import {
  agentTooLarge,
  agentUnauthorized,
  agentUnavailable,
  httpStatusOf,
  logDetail,
  refusalIn,
  tooLargeIn,
} from './a2a.errors.js';
import { REMOTE_TASK_KEY, RemoteTaskFollower, type RemoteTask } from './a2a.stream.js';
import type { AgentCallResult } from '../orchestrator/protocol.js';
import { dataPart, textPart } from '../agent-events.js';

/** How long a fetched agent card is used before it is fetched again. */
const CARD_TTL_MS = 60_000;
/** How long fetching a card may take. */
const CARD_TIMEOUT_MS = 10_000;
/** Re-joins of a remote task whose stream ended before it rested, and the pause before each (× attempt). */
const REJOIN_ATTEMPTS = 3;
const REJOIN_BACKOFF_MS = 200;

/** What one call learned for its span: the binding the client chose, and why it failed. */
interface CallNotes {
  binding?: string;
  /** A bounded `error.type`: an HTTP status, `unauthorized`, `response_too_large`, an error class. */
  errorType?: string;
}

/**
 * The `a2a` actor backend: each turn sent to an external A2A agent with the SDK client, through the
 * model endpoints' SSRF policy (docs/design-notes.md#external-a2a-agents).
 */
@Injectable()
export class A2aAgentBackend implements TurnBackend {
  readonly name = 'a2a' as const;
  private readonly logger = new Logger(A2aAgentBackend.name);
  private readonly fetch: typeof fetch;
  private readonly cards = new Map<string, { card: AgentCard; until: number }>();
  /** Aborted by `stop()`: in-flight turns let go of their streams (their remote tasks go on). */
  private detach = new AbortController();

  constructor(
    config: AppConfig,
    private readonly secretBox: SecretBox,
    @Optional() private readonly metrics?: OutboundMetrics,
  ) {
    // Every request to an agent (its card included) carries the trace context of the call that makes it.
    this.fetch = tracingFetch(boundedFetch(new ModelEndpointGuard(config).agentFetch(), config.a2aMaxResponseBytes));
  }

  start(): void {
    if (this.detach.signal.aborted) this.detach = new AbortController();
  }

  stop(): void {
    this.detach.abort();
  }

  readiness(): ActorBackendReadiness {
    return { ready: true, detail: 'external A2A agents: reached per turn' };
  }

  /** An external agent keeps its own context: nothing of it is assembled here. */
  assemble(): Promise<AssembledContext> {
    return Promise.resolve({ model: undefined, messages: [], estimatedTokens: 0, omittedMessages: 0 });
  }

  /**
   * A turn sent to the agent, as a CLIENT span `a2a.<method>`: SendStreamingMessage, or SubscribeToTask for a
   * remote task a restarted server follows again (a child of the active span: the turn's, or its tool call's).
   */
  async run(turn: ActorTurn): Promise<TurnResult> {
    const agent = turn.actor.a2a;
    if (!agent) return { state: 'failed', reason: `The actor "${turn.actor.name}" names no external agent (a2a)` };
    const known = turn.mode === 'start' ? {} : remoteOf(turn.remembered);
    const method = turn.mode === 'recover' && known.taskId ? 'SubscribeToTask' : 'SendStreamingMessage';
    const attributes = {
      [RPC_METHOD]: method,
      [GEN_AI_OPERATION_NAME]: 'invoke_agent',
      [GEN_AI_AGENT_NAME]: turn.actor.name,
      ...serverAttributes(agent.url),
    };
    return await inClientSpan(`a2a.${method}`, attributes, async (span) => {
      const notes: CallNotes = {};
      const follower = new RemoteTaskFollower(
        turn.output,
        (remote) => turn.output.remember({ [REMOTE_TASK_KEY]: remote }),
        known,
      );
      const result = await this.call(turn, agent, known, follower, notes, span);
      if (span.isRecording()) {
        setAttributes(span, {
          [RPC_SYSTEM]: rpcSystemOf(notes.binding),
          [CA_OUTCOME]: result.state,
          [CA_A2A_REMOTE_TASK_ID]: remoteLabel(follower.remote.taskId),
          [CA_A2A_REMOTE_TASK_STATE]: stateLabel(follower.remoteState),
          [CA_A2A_PROTOCOL_BINDING]: notes.binding,
        });
        if (result.state === 'failed') failOutbound(span, notes.errorType ?? 'remote_failed');
      }
      return result;
    });
  }

  private async call(
    turn: ActorTurn,
    agent: StoredA2aAgent,
    known: RemoteTask,
    follower: RemoteTaskFollower,
    notes: CallNotes,
    span: Span,
  ): Promise<TurnResult> {
    const signal = AbortSignal.any([turn.signal, this.detach.signal]);
    let credential: string | undefined;
    try {
      credential = openCredential(this.secretBox, turn.namespace, turn.actor.name, agent);
    } catch (error) {
      notes.errorType = 'credential_unreadable';
      return this.unavailable(turn, `the stored credential cannot be opened: ${logDetail(error, undefined)}`);
    }
    let client: Client;
    // The agent's refusal of the credential, seen on the response itself: the SDK's error may not say it.
    const refused: { status?: number } = {};
    try {
      const card = await this.card(agent.url, signal);
      const auth = chooseAuth(card, agent.auth?.scheme, credential);
      if ('problem' in auth) {
        notes.errorType = 'unauthorized';
        return { state: 'failed', reason: agentUnauthorized(turn.actor.name, auth.problem) };
      }
      client = await this.clientFor(card, agent, auth.presentation, refused, notes);
    } catch (error) {
      if (isAborted(signal)) return { state: 'canceled' };
      this.cards.delete(agent.url);
      return this.failed(turn, error, credential, refused.status, notes);
    }

    const invocation = context.active();
    let cancelling: Promise<void> | undefined;
    const onAbort = () => {
      // Stopping the server (or a pause) lets go of the remote task: it goes on, and is re-joined later.
      const reason: unknown = turn.signal.reason;
      if (reason === TURN_DETACHED || reason === TURN_PAUSED || this.detach.signal.aborted) return;
      const id = follower.remote.taskId;
      if (!id) return;
      // In the call's trace, linked to whatever asked for the cancel (a CancelTask call).
      const options = { parent: invocation, links: causeLinks(span) };
      cancelling = this.cancelRemote(client, id, turn.actor.name, agent, notes.binding, options);
    };
    turn.signal.addEventListener('abort', onAbort, { once: true });
    let result: TurnResult | undefined;
    try {
      if (turn.mode === 'recover' && known.taskId) {
        result = await this.rejoin(client, follower, known.taskId, signal, false);
      } else {
        const message = this.messageOf(turn, agent, known);
        const stream = client.sendMessageStream(
          { tenant: '', message, configuration: undefined, metadata: undefined },
          { signal },
        );
        for await (const event of stream) await follower.accept(event);
        result = follower.result();
        if (!result && follower.remote.taskId) {
          result = await this.rejoin(client, follower, follower.remote.taskId, signal, true);
        }
      }
    } catch (error) {
      if (!isAborted(signal)) {
        this.cards.delete(agent.url);
        return this.failed(turn, error, credential, refused.status, notes);
      }
    } finally {
      turn.signal.removeEventListener('abort', onAbort);
    }
    if (turn.signal.aborted || this.detach.signal.aborted) {
      await cancelling;
      return { state: 'canceled' };
    }
    if (result?.state === 'input-required' && follower.remote.taskId) {
      result = {
        ...result,
        asker: {
          actor: turn.actor.name,
          origin: new URL(agent.url).origin,
          remoteTaskId: follower.remote.taskId,
          ...(follower.statusMessageId ? { messageId: follower.statusMessageId } : {}),
        },
      };
    }
    if (!result) notes.errorType = 'stream_ended';
    return result ?? this.unavailable(turn, 'the stream ended before the remote task rested');
  }

  /**
   * A sub-agent call of an orchestrated turn: one task on the agent, in a remote context of its own per
   * (session, agent); its text is the answer, its other artifacts come along. Not remembered: a call cut
   * off by a restart is made again.
   */
  async ask(parent: ActorTurn, agent: ActorDefinition, message: string, callId: string): Promise<AgentCallResult> {
    let answer = '';
    const artifacts: ArtifactChunk[] = [];
    const input: Message = {
      messageId: randomUUID(),
      contextId: '',
      taskId: '',
      role: Role.ROLE_USER,
      parts: [textPart(message)],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    };
    const result = await this.run({
      ...parent,
      taskId: `${parent.taskId}/${callId}`,
      contextId: `${parent.contextId}/${agent.name}`,
      actor: agent,
      mode: 'start',
      input: { text: message, data: [], message: input },
      remembered: {},
      subAgents: {},
      output: {
        working: () => undefined,
        text: (delta) => (answer += delta),
        restartText: () => (answer = ''),
        artifact: (chunk) => artifacts.push(chunk),
        remember: () => Promise.resolve(),
        plan: () => undefined,
        toolCall: () => undefined,
        toolResult: () => undefined,
        usage: () => undefined,
      },
    });
    const shown = artifacts.map(({ name, parts }) => ({ name, parts: parts.map((part) => part.content) }));
    switch (result.state) {
      case 'completed':
        return { state: 'completed', answer: result.text ?? answer, artifacts: shown };
      case 'input-required':
        return { state: 'input-required', answer: result.text, artifacts: shown };
      case 'failed':
      case 'rejected':
        return { state: result.state, answer: result.reason, artifacts: shown };
      case 'canceled':
        return { state: 'canceled', answer: '', artifacts: shown };
    }
  }

  /**
   * A task of ours that waited at the agent's request ended (canceled, superseded, its budget out): the agent's
   * task `remoteTaskId` is canceled too. Failures are logged: ours is ended either way.
   */
  async cancelWaiting(namespace: string, actor: ActorDefinition, remoteTaskId: string): Promise<void> {
    const agent = actor.a2a;
    if (!agent) return;
    try {
      const credential = openCredential(this.secretBox, namespace, actor.name, agent);
      const signal = AbortSignal.timeout(CARD_TIMEOUT_MS);
      const card = await this.card(agent.url, signal);
      const auth = chooseAuth(card, agent.auth?.scheme, credential);
      if ('problem' in auth) throw new Error(auth.problem);
      const notes: CallNotes = {};
      const client = await this.clientFor(card, agent, auth.presentation, {}, notes);
      await this.cancelRemote(client, remoteTaskId, actor.name, agent, notes.binding);
    } catch (error) {
      this.logger.warn({ msg: 'could not cancel the remote A2A task', error: logDetail(error, undefined) });
    }
  }

  /** The message the agent is sent: the caller's parts, on the remote context (and task, when resumed). */
  private messageOf(turn: ActorTurn, agent: StoredA2aAgent, known: RemoteTask): Message {
    return {
      messageId: randomUUID(),
      contextId: known.contextId ?? remoteContextId(turn, agent.url),
      taskId: turn.mode === 'resume' ? (known.taskId ?? '') : '',
      role: Role.ROLE_USER,
      parts: answerParts(turn.input.message.parts),
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    };
  }

  /**
   * Follows a remote task whose stream ended before it rested (`again`), or that a restarted server takes over:
   * re-subscribed, or read back when it rests already, up to REJOIN_ATTEMPTS times. Each attempt after the
   * call's own first request is counted as a retry.
   */
  private async rejoin(
    client: Client,
    follower: RemoteTaskFollower,
    id: string,
    signal: AbortSignal,
    again: boolean,
  ): Promise<TurnResult | undefined> {
    let last: unknown;
    for (let attempt = 1; attempt <= REJOIN_ATTEMPTS; attempt++) {
      if (signal.aborted) return undefined;
      if (again || attempt > 1) {
        this.metrics?.retried('a2a', last === undefined ? 'stream_ended' : 'error');
        trace.getActiveSpan()?.addEvent(CA_REJOIN_EVENT, { [CA_ATTEMPT]: attempt });
      }
      try {
        follower.task(await client.getTask({ tenant: '', id, historyLength: 0 }, { signal }));
        const rested = follower.result();
        if (rested) return rested;
        for await (const event of client.resubscribeTask({ tenant: '', id }, { signal })) await follower.accept(event);
        const result = follower.result();
        if (result) return result;
      } catch (error) {
        if (isAborted(signal)) return undefined;
        last = error;
      }
      await new Promise((resolve) => setTimeout(resolve, REJOIN_BACKOFF_MS * attempt));
    }
    if (last !== undefined) throw last instanceof Error ? last : new Error(JSON.stringify(last));
    return undefined;
  }

  /** CancelTask on the agent, as a CLIENT span `a2a.CancelTask`; a failure is logged, never thrown. */
  private async cancelRemote(
    client: Client,
    id: string,
    actorName: string,
    agent: StoredA2aAgent,
    binding: string | undefined,
    options: ClientSpanOptions = {},
  ): Promise<void> {
    const attributes = { [RPC_METHOD]: 'CancelTask', [GEN_AI_AGENT_NAME]: actorName, ...serverAttributes(agent.url) };
    await inClientSpan(
      'a2a.CancelTask',
      attributes,
      async (span) => {
        setAttributes(span, {
          [RPC_SYSTEM]: rpcSystemOf(binding),
          [CA_A2A_PROTOCOL_BINDING]: binding,
          [CA_A2A_REMOTE_TASK_ID]: remoteLabel(id),
        });
        try {
          const task = await client.cancelTask(
            { tenant: '', id, metadata: undefined },
            { signal: AbortSignal.timeout(CARD_TIMEOUT_MS) },
          );
          setAttributes(span, { [CA_A2A_REMOTE_TASK_STATE]: stateLabel(task.status?.state) });
        } catch (error) {
          // The task is canceled here either way; a remote task we could not reach ends on its own.
          failOutbound(span, a2aErrorType(error));
          this.logger.warn({ msg: 'could not cancel the remote A2A task', error: logDetail(error, undefined) });
        }
      },
      options,
    );
  }

  /** The agent's card, fetched through the guard and kept for CARD_TTL_MS. */
  private async card(url: string, signal: AbortSignal): Promise<AgentCard> {
    const cached = this.cards.get(url);
    if (cached && cached.until > Date.now()) return cached.card;
    const bounded = AbortSignal.any([signal, AbortSignal.timeout(CARD_TIMEOUT_MS)]);
    const resolver = new DefaultAgentCardResolver({
      fetchImpl: (input, init) => this.fetch(input, { ...init, signal: bounded }),
      legacyCompat: { enabled: true },
    });
    const card = await resolver.resolve(url);
    if (this.cards.size >= 1000) this.cards.clear();
    this.cards.set(url, { card, until: Date.now() + CARD_TTL_MS });
    return card;
  }

  private clientFor(
    card: AgentCard,
    agent: StoredA2aAgent,
    presentation: Parameters<typeof authenticatingFetch>[2],
    refused: { status?: number },
    notes: CallNotes,
  ): Promise<Client> {
    const authenticating = authenticatingFetch(this.fetch, new URL(agent.url).origin, presentation);
    const fetchImpl: typeof fetch = async (input, init) => {
      const response = await authenticating(input, init);
      if (response.status === 401 || response.status === 403) refused.status = response.status;
      return response;
    };
    const factory = new ClientFactory({
      transports: [
        noting(new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } }), notes),
        noting(new RestTransportFactory({ fetchImpl, legacyCompat: { enabled: true } }), notes),
      ],
    });
    return factory.createFromAgentCard(card);
  }

  /** A failure as the caller sees it: a stable reason (and a correlation id); the detail in the log. */
  private failed(
    turn: ActorTurn,
    error: unknown,
    credential: string | undefined,
    refused: number | undefined,
    notes: CallNotes,
  ): TurnResult {
    const status = refused ?? httpStatusOf(error);
    notes.errorType = a2aErrorType(error, status);
    if (status === 401 || status === 403) {
      this.logger.warn(
        `Task ${turn.taskId} (actor ${turn.actor.name}): the external A2A agent refused the credential: ` +
          logDetail(error, credential),
      );
      return {
        state: 'failed',
        reason: agentUnauthorized(
          turn.actor.name,
          `refused the stored credential (HTTP ${status}): check spec.a2a.auth`,
        ),
      };
    }
    const tooLarge = tooLargeIn(error);
    if (tooLarge) {
      this.logger.warn(`Task ${turn.taskId} (actor ${turn.actor.name}): ${logDetail(error, credential)}`);
      return { state: 'failed', reason: agentTooLarge(turn.actor.name, tooLarge) };
    }
    return this.unavailable(turn, logDetail(error, credential));
  }

  private unavailable(turn: ActorTurn, detail: string): TurnResult {
    const correlationId = randomUUID();
    this.logger.warn(
      `Task ${turn.taskId} (actor ${turn.actor.name}) failed: the external A2A agent at ` +
        `${hostOf(turn.actor.a2a?.url)}: ${detail} (correlation id ${correlationId})`,
    );
    return { state: 'failed', reason: agentUnavailable(turn.actor.name, correlationId) };
  }
}

/**
 * What the agent is sent for the answer to its request (docs/execution.md, "a2a"): the person's parts as they
 * are; for an approval-response, a data part `{decision, reason?}` (approve, reject), or the parts it gives
 * as `edited` (edit). The server's own types never reach the agent.
 */
export function answerParts(parts: readonly Part[]): Part[] {
  const response = parts
    .map((part) =>
      part.content?.$case === 'data' ? (part.content.value as Record<string, unknown> | undefined) : undefined,
    )
    .find((value) => value?.type === APPROVAL_RESPONSE_TYPE);
  if (!response) return [...parts];
  if (response.decision === 'edit' && Array.isArray(response.edited)) {
    return (response.edited as Record<string, unknown>[]).map((part) =>
      typeof part.text === 'string' ? textPart(part.text) : dataPart(part.data as Record<string, unknown>),
    );
  }
  return [
    dataPart({
      decision: response.decision,
      ...(typeof response.reason === 'string' && response.reason !== '' ? { reason: response.reason } : {}),
    }),
  ];
}

/** A transport factory that notes its binding when the client factory chooses it. */
function noting(factory: TransportFactory, notes: CallNotes): TransportFactory {
  return {
    get protocolName() {
      return factory.protocolName;
    },
    create: (url, card) => {
      notes.binding = factory.protocolName;
      return factory.create(url, card);
    },
  };
}

/**
 * A bounded `error.type` for a failed request to an agent: the HTTP status it answered, `url_refused` (the
 * outbound policy), `response_too_large`, else the error's class.
 */
function a2aErrorType(error: unknown, status: number | undefined = httpStatusOf(error)): string {
  if (status !== undefined) return String(status);
  if (refusalIn(error)) return 'url_refused';
  if (tooLargeIn(error)) return 'response_too_large';
  return errorTypeOf(error);
}

/** `rpc.system` of a call over the binding: `jsonrpc`, unless the client chose HTTP+JSON (no RPC system then). */
function rpcSystemOf(binding: string | undefined): string | undefined {
  return binding === undefined || binding === 'JSONRPC' ? 'jsonrpc' : undefined;
}

/** A remote task's state as a label: `completed`, `input_required`…; undefined before it had one. */
function stateLabel(state: TaskState | undefined): string | undefined {
  if (state === undefined) return undefined;
  return taskStateToJSON(state)
    .replace(/^TASK_STATE_/, '')
    .toLowerCase();
}

/** The remote task remembered with our task, if any. */
function remoteOf(remembered: Readonly<Record<string, unknown>>): RemoteTask {
  const stored = remembered[REMOTE_TASK_KEY] as { taskId?: unknown; contextId?: unknown } | undefined;
  return {
    taskId: typeof stored?.taskId === 'string' ? stored.taskId : undefined,
    contextId: typeof stored?.contextId === 'string' ? stored.contextId : undefined,
  };
}

/** The remote context of a session: a UUID from who owns it and where it goes, saying nothing of our ids. */
function remoteContextId(turn: ActorTurn, url: string): string {
  const hex = createHash('sha256')
    .update(JSON.stringify(['a2a-context', turn.namespace, turn.owner, turn.contextId, url]))
    .digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

function hostOf(url: string | undefined): string {
  try {
    return new URL(url ?? '').host;
  } catch {
    return '(no url)';
  }
}
