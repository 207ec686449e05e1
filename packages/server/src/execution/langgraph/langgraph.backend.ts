import { randomUUID } from 'node:crypto';
import { Injectable, Logger, Optional } from '@nestjs/common';
import { Client } from '@langchain/langgraph-sdk';
import { context, type Attributes, type Span } from '@opentelemetry/api';
import { AppConfig } from '../../config/app.config.js';
import { OutboundMetrics } from '../../metrics/outbound-metrics.js';
import {
  CA_LANGGRAPH_RUN_ID,
  CA_LANGGRAPH_THREAD_ID,
  CA_OUTCOME,
  GEN_AI_AGENT_NAME,
  GEN_AI_OPERATION_NAME,
} from '../../telemetry/attributes.js';
import {
  causeLinks,
  errorTypeOf,
  failOutbound,
  inClientSpan,
  remoteLabel,
  serverAttributes,
} from '../../telemetry/outbound.js';
import { setAttributes } from '../../telemetry/tracing.js';
import type {
  AssembleRequest,
  ActorBackendReadiness,
  ActorDefinition,
  ActorTurn,
  AssembledContext,
  TurnBackend,
  TurnResult,
} from '../actor-turn.js';
import { TURN_DETACHED, TURN_PAUSED } from '../actor-turn.js';
import { LangGraphUnavailableError, problemOf, statusOf } from './langgraph.errors.js';
import { LangGraphRuns, type RunHandle } from './langgraph.runs.js';
import { countingRetries, tracingRequests } from './langgraph.telemetry.js';
import { langGraphThreadId, PAUSED_RUN_KEY, type PausedRun, trimToTokens } from './langgraph.mapping.js';
import { contentText, roleOfType } from '../turn-values.js';

export interface LangGraphBackendOptions {
  /** How often the readiness probe (GET /ok) runs once started; 5 s unless told. */
  probeIntervalMs?: number;
  /** How long one probe may take; 2 s unless told. */
  probeTimeoutMs?: number;
  /** Timeout of the non-streaming requests (thread and run reads, cancel); 30 s unless told. */
  requestTimeoutMs?: number;
  /** Retries of a failed request (connection refused, 5xx) by the SDK; 2 unless told. */
  maxRetries?: number;
}

/**
 * The `langgraph` actor backend (docs/protocol.md §5): a session is a thread, a turn a run, re-joined
 * after a restart (docs/design-notes.md#langgraph-backend).
 */
@Injectable()
export class LangGraphActorBackend implements TurnBackend {
  readonly name = 'langgraph' as const;
  private readonly logger = new Logger(LangGraphActorBackend.name);
  private readonly client: Client | undefined;
  /** The runs of the configured server; undefined when none is configured. */
  private readonly runs: LangGraphRuns | undefined;
  private readonly url: string | undefined;
  private readonly apiKey: string | undefined;
  private readonly host: string;
  /** `server.address` and `server.port` of the configured server, for its spans. */
  private readonly server: Attributes = {};
  private readonly probeIntervalMs: number;
  private readonly probeTimeoutMs: number;
  private current: ActorBackendReadiness;
  private timer: NodeJS.Timeout | undefined;
  private probing = false;
  /** Aborted by `stop()`: the HTTP streams of in-flight turns (their remote runs continue). */
  private detach = new AbortController();

  constructor(
    config: AppConfig,
    /** Tests set shorter probes; the application none. */
    @Optional() options: LangGraphBackendOptions = {},
    @Optional() metrics?: OutboundMetrics,
  ) {
    this.probeIntervalMs = options.probeIntervalMs ?? 5000;
    this.probeTimeoutMs = options.probeTimeoutMs ?? 2000;
    const settings = config.langgraph;
    if (!settings) {
      this.host = '(unset)';
      this.current = {
        ready: false,
        detail: 'CLEVERAGENTS_LANGGRAPH_URL is not set: the langgraph backend has no server to run graphs on',
      };
      return;
    }
    this.url = settings.url;
    this.apiKey = settings.apiKey;
    this.host = hostOf(settings.url);
    this.server = serverAttributes(settings.url);
    const retried = metrics ? metrics.retried.bind(metrics, 'langgraph') : undefined;
    this.client = new Client({
      apiUrl: settings.url,
      // null, not undefined: never fall back to LANGGRAPH_API_KEY / LANGSMITH_API_KEY from the environment.
      apiKey: settings.apiKey ?? null,
      timeoutMs: options.requestTimeoutMs ?? 30_000,
      callerOptions: { maxRetries: options.maxRetries ?? 2, maxConcurrency: 64, fetch: countingRetries(retried) },
      // Every request carries the trace context of the span it is made in (the run's invocation).
      onRequest: tracingRequests(retried),
    });
    this.runs = new LangGraphRuns(this.client, this.logger, (error) => this.describe(error), retried);
    this.current = { ready: false, detail: `LangGraph server at ${this.host}: not checked yet` };
  }

  /** Starts the background readiness probe (an immediate one, then every few seconds). */
  start(): void {
    if (this.detach.signal.aborted) this.detach = new AbortController();
    if (!this.client || this.timer) return;
    void this.probe();
    this.timer = setInterval(() => void this.probe(), this.probeIntervalMs);
    this.timer.unref();
  }

  /** Stops the probe and detaches in-flight turns (see the class comment); their runs continue remotely. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.detach.abort();
  }

  readiness(): ActorBackendReadiness {
    return { ...this.current };
  }

  /** Refreshes the cached readiness: GET {url}/ok within the probe timeout. */
  async probe(): Promise<ActorBackendReadiness> {
    if (!this.url || this.probing) return this.readiness();
    this.probing = true;
    try {
      const response = await fetch(`${this.url}/ok`, {
        headers: this.apiKey ? { 'x-api-key': this.apiKey } : {},
        signal: AbortSignal.timeout(this.probeTimeoutMs),
      });
      await response.body?.cancel();
      this.current = response.ok
        ? { ready: true, detail: `LangGraph server at ${this.host} answers` }
        : { ready: false, detail: `LangGraph server at ${this.host}: GET /ok answered HTTP ${response.status}` };
    } catch (error) {
      this.current = { ready: false, detail: `LangGraph server at ${this.host} ${problemOf(error, this.apiKey)}` };
    } finally {
      this.probing = false;
    }
    return this.readiness();
  }

  async run(turn: ActorTurn): Promise<TurnResult> {
    const runs = this.runs;
    if (!runs) return { state: 'failed', reason: this.current.detail };
    const graphId = graphOf(turn.actor);
    if (!graphId) {
      return {
        state: 'failed',
        reason: `The actor "${turn.actor.name}" names no graph (graphId) to run on the LangGraph server`,
      };
    }
    const threadId = langGraphThreadId(turn.namespace, turn.owner, turn.contextId);
    const attributes = {
      [GEN_AI_OPERATION_NAME]: 'invoke_agent',
      [GEN_AI_AGENT_NAME]: graphId,
      [CA_LANGGRAPH_THREAD_ID]: threadId,
      ...this.server,
    };
    return await inClientSpan(`invoke_agent ${graphId}`, attributes, (span) =>
      this.invoke(runs, turn, graphId, threadId, span),
    );
  }

  /** A turn's run on the thread, inside its `invoke_agent` span (see run()). */
  private async invoke(
    runs: LangGraphRuns,
    turn: ActorTurn,
    graphId: string,
    threadId: string,
    span: Span,
  ): Promise<TurnResult> {
    const detach = this.detach.signal;
    const signal = AbortSignal.any([turn.signal, detach]);
    // The run id, as soon as any source tells it: needed to cancel the run.
    const handle: RunHandle = {};
    const invocation = context.active();
    let cancelling: Promise<string | undefined> | undefined;
    const onCancel = () => {
      // The server stopping (TURN_DETACHED) lets go of the run: it goes on and is re-joined after restart.
      if (!detach.aborted && turn.signal.reason !== TURN_DETACHED) {
        // A pause waits until the run stopped: nothing of it goes on while the plan shows paused.
        const wait = turn.signal.reason === TURN_PAUSED;
        const attributes = { [GEN_AI_AGENT_NAME]: graphId, [CA_LANGGRAPH_THREAD_ID]: threadId, ...this.server };
        // In the invocation's trace, linked to whatever asked for the cancel (a CancelTask call, a pause).
        const options = { parent: invocation, links: causeLinks(span) };
        cancelling = inClientSpan(
          `cancel_run ${graphId}`,
          attributes,
          (cancel) => {
            setAttributes(cancel, { [CA_LANGGRAPH_RUN_ID]: remoteLabel(handle.runId) });
            return runs.cancelRemote(threadId, turn.taskId, handle.runId, wait);
          },
          options,
        );
      }
    };
    turn.signal.addEventListener('abort', onCancel, { once: true });
    let result: TurnResult;
    // A failure's `error.type`: the client's (an HTTP status, an error class), else the run's own failure.
    let errorType = 'run_failed';
    try {
      result = await runs.runOnThread(turn, graphId, threadId, signal, handle);
    } catch (error) {
      errorType = langGraphErrorType(error);
      result = this.failed(turn, this.describe(error));
    } finally {
      turn.signal.removeEventListener('abort', onCancel);
    }
    setAttributes(span, { [CA_LANGGRAPH_RUN_ID]: remoteLabel(handle.runId) });
    if (!turn.signal.aborted && !detach.aborted) {
      setAttributes(span, { [CA_OUTCOME]: result.state });
      if (result.state === 'failed') failOutbound(span, errorType);
      return result;
    }
    setAttributes(span, { [CA_OUTCOME]: 'canceled' });
    const stopped = await cancelling;
    if (turn.signal.reason === TURN_PAUSED && !detach.aborted) {
      const paused: PausedRun = {
        runId: stopped ?? handle.runId ?? null,
        mode: turn.mode,
        replay: handle.report?.sinceStep ?? 0,
      };
      // Without it the resumed turn would re-join (or read) the stopped run instead of continuing it.
      await turn.output.remember({ [PAUSED_RUN_KEY]: paused }).catch((error: unknown) =>
        this.logger.warn({
          msg: 'could not remember a paused LangGraph run',
          runId: paused.runId,
          error: String(error),
        }),
      );
    }
    return { state: 'canceled' };
  }

  async assemble(session: AssembleRequest): Promise<AssembledContext> {
    const client = this.client;
    if (!client) throw new LangGraphUnavailableError(this.current.detail);
    const threadId = langGraphThreadId(session.namespace, session.owner, session.contextId);
    let values: unknown;
    try {
      values = (await client.threads.getState(threadId)).values;
    } catch (error) {
      // A session without turns has no thread yet: its context is empty.
      if (statusOf(error) !== 404) throw new LangGraphUnavailableError(this.describe(error));
    }
    const raw = (values as { messages?: unknown } | undefined)?.messages;
    const messages: AssembledContext['messages'] = [];
    for (const message of Array.isArray(raw) ? raw : []) {
      const { type, role, content } = (message ?? {}) as { type?: unknown; role?: unknown; content?: unknown };
      const mapped = roleOfType(type ?? role);
      if (mapped) messages.push({ role: mapped, content: contentText(content) });
    }
    return { model: undefined, ...trimToTokens(messages, session.maxTokens) };
  }

  /**
   * A failed turn as its caller sees it: a stable reason and a correlation id, no address, port, errno
   * or status (no network probing through the server); the detail goes to the log under that id.
   */
  private failed(turn: ActorTurn, detail: string): TurnResult {
    const correlationId = randomUUID();
    this.logger.warn(
      `Task ${turn.taskId} (actor ${turn.actor.name}) failed: ${detail} (correlation id ${correlationId})`,
    );
    return {
      state: 'failed',
      reason:
        `ACTOR_BACKEND_UNAVAILABLE: the LangGraph backend could not run actor "${turn.actor.name}"; ` +
        `the server log has the details (correlation id ${correlationId})`,
    };
  }

  /** A failure as the log reads it: what went wrong and where, never the API key. */
  private describe(error: unknown): string {
    return `The LangGraph server at ${this.host} ${problemOf(error, this.apiKey)}`;
  }
}

/** A bounded `error.type` for a failure of the LangGraph client: the HTTP status, else the error's class. */
function langGraphErrorType(error: unknown): string {
  const status = statusOf(error);
  return status === undefined ? errorTypeOf(error) : String(status);
}

function graphOf(actor: ActorDefinition): string | undefined {
  return actor.graphId || actor.localGraph || undefined;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}
