import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { Client } from '@langchain/langgraph-sdk';
import type { AppConfig } from '../../config/app.config.js';
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
import { LangGraphUnavailableError } from './langgraph.errors.js';
import {
  langGraphThreadId,
  PAUSED_RUN_KEY,
  pausedRunOf,
  type PausedRun,
  rejectionInUpdates,
  rejectionOf,
  REPORTED_EVENTS_KEY,
  reportedEvents,
  RunReport,
  startInput,
  trimToTokens,
} from './langgraph.mapping.js';
import { contentText, interruptQuestion, resumeValue, roleOfType } from '../turn-values.js';

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
 * `messages-tuple` streams the AI tokens; `updates` carries the graph's interrupts and a rejection its
 * nodes write; `custom` the orchestrator protocol's events (plan, tool call and result, usage).
 */
const STREAM_MODE: ('messages-tuple' | 'updates' | 'custom')[] = ['messages-tuple', 'updates', 'custom'];

/** Longest remote error text quoted in a `failed` reason. */
const MAX_REASON_DETAIL = 500;

interface StreamPart {
  id?: string;
  event: string;
  data: unknown;
}

/** What a stream told us about the run it followed. */
interface Followed {
  runId: string | undefined;
  interrupt?: { value: unknown };
  /** A node wrote `rejection: {reason}`: the client rejected the plan at its gate. */
  rejection?: string;
  error?: string;
  /** The stream ended while the run was still pending or running there. */
  lostWhileRunning?: boolean;
}

/** How a turn whose stream dropped begins its reason, when it could not be re-joined. */
const LOST_STREAM = 'Lost the stream of LangGraph run';
/** Re-joins of a dropped stream before the turn fails, and the pause before each (× attempt). */
const REJOIN_ATTEMPTS = 3;
const REJOIN_BACKOFF_MS = 200;

/** What a turn knows of its run: its id as soon as any source tells it, and what the run reported. */
interface RunHandle {
  runId?: string;
  report?: RunReport;
}

/**
 * The `langgraph` actor backend (SPEC.md §5): runs each turn on a remote LangGraph Platform / Agent
 * Server through @langchain/langgraph-sdk. A session (contextId) is a thread, a task's turn is a run,
 * a graph interrupt is `input-required`, the client's answer is `Command({resume})`, CancelTask
 * cancels the run. A run outlives our process: its id is remembered as soon as it is known, and a
 * restarted server re-joins the run's stream instead of starting it again.
 *
 * The orchestrator protocol (src/execution/orchestrator/protocol.ts): a task's first input carries
 * `setup` beside the message; the graph's `custom` stream events go to `reportEvent`; typed interrupt
 * values (approval- and client-requests) are the `input-required` value; a node that writes
 * `rejection: {reason}` ends the turn `rejected` (a run read back from the thread after a restart: the
 * state's `rejection`, so a graph clears it when a new input starts). Usage is the graph's
 * `cleveragents/usage` events, or else an estimate of the tokens the run streamed; never both.
 *
 * Shutdown: an abort of `turn.signal` with reason TURN_DETACHED (or `stop()`) detaches the HTTP streams
 * without cancelling the remote runs, which keep running and are re-joined by `mode: 'recover'` after
 * the restart. Any other abort of `turn.signal` is a CancelTask and cancels the remote run.
 *
 * Pause (`plan/pause`, reason TURN_PAUSED): the run is cancelled with action `interrupt`, which stops it
 * and keeps its thread's checkpoints (the last one is at the nodes that had not finished), and the
 * stopped run is remembered (PAUSED_RUN_KEY). The resumed turn (`recover`) starts a new run on the
 * thread with no input, which runs those unfinished nodes again from their start: their answer streams
 * again from its start, and the custom events they had reported before the pause are passed over.
 */
export class LangGraphActorBackend implements TurnBackend {
  readonly name = 'langgraph' as const;
  private readonly logger = new Logger(LangGraphActorBackend.name);
  private readonly client: Client | undefined;
  private readonly url: string | undefined;
  private readonly apiKey: string | undefined;
  private readonly host: string;
  private readonly probeIntervalMs: number;
  private readonly probeTimeoutMs: number;
  private current: ActorBackendReadiness;
  private timer: NodeJS.Timeout | undefined;
  private probing = false;
  /** Aborted by `stop()`: the HTTP streams of in-flight turns (their remote runs continue). */
  private detach = new AbortController();
  /** Threads known to exist, so a turn on a known thread skips the create call. Bounded. */
  private readonly knownThreads = new Set<string>();

  constructor(config: AppConfig, options: LangGraphBackendOptions = {}) {
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
    this.client = new Client({
      apiUrl: settings.url,
      // null, not undefined: never fall back to LANGGRAPH_API_KEY / LANGSMITH_API_KEY from the environment.
      apiKey: settings.apiKey ?? null,
      timeoutMs: options.requestTimeoutMs ?? 30_000,
      callerOptions: { maxRetries: options.maxRetries ?? 2, maxConcurrency: 64 },
    });
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
      this.current = { ready: false, detail: `LangGraph server at ${this.host} ${this.problem(error)}` };
    } finally {
      this.probing = false;
    }
    return this.readiness();
  }

  async run(turn: ActorTurn): Promise<TurnResult> {
    const client = this.client;
    if (!client) return { state: 'failed', reason: this.current.detail };
    const graphId = graphOf(turn.actor);
    if (!graphId) {
      return {
        state: 'failed',
        reason: `The actor "${turn.actor.name}" names no graph (graphId) to run on the LangGraph server`,
      };
    }
    const threadId = langGraphThreadId(turn.namespace, turn.owner, turn.contextId);
    const detach = this.detach.signal;
    const signal = AbortSignal.any([turn.signal, detach]);
    // The run id, as soon as any source tells it: needed to cancel the run.
    const handle: RunHandle = {};
    let cancelling: Promise<string | undefined> | undefined;
    const onCancel = () => {
      // The server stopping (TURN_DETACHED) lets go of the run: it goes on and is re-joined after restart.
      if (!detach.aborted && turn.signal.reason !== TURN_DETACHED) {
        // A pause waits until the run stopped: nothing of it goes on while the plan shows paused.
        const wait = turn.signal.reason === TURN_PAUSED;
        cancelling = this.cancelRemote(client, threadId, turn.taskId, handle.runId, wait);
      }
    };
    turn.signal.addEventListener('abort', onCancel, { once: true });
    let result: TurnResult;
    try {
      result = await this.runOnThread(client, turn, graphId, threadId, signal, handle);
    } catch (error) {
      result = this.failed(turn, this.describe(error));
    } finally {
      turn.signal.removeEventListener('abort', onCancel);
    }
    if (!turn.signal.aborted && !detach.aborted) return result;
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

  private async runOnThread(
    client: Client,
    turn: ActorTurn,
    graphId: string,
    threadId: string,
    signal: AbortSignal,
    handle: RunHandle,
  ): Promise<TurnResult> {
    if (signal.aborted) return { state: 'canceled' };
    const paused = turn.mode === 'recover' ? pausedRunOf(turn.remembered) : undefined;
    if (paused) return await this.continuePaused(client, turn, graphId, threadId, signal, handle, paused);
    const remembered = typeof turn.remembered.runId === 'string' ? turn.remembered.runId : undefined;
    if (turn.mode === 'recover' && remembered) {
      handle.runId = remembered;
      const report = (handle.report = new RunReport(turn.output, reportedEvents(turn.remembered, remembered)));
      return await this.recover(client, turn, threadId, remembered, signal, report);
    }
    await this.ensureThread(client, turn, threadId, signal);
    return await this.startRun(client, turn, graphId, threadId, signal, handle, payloadOf(turn, turn.mode));
  }

  /**
   * Continues a run `plan/pause` stopped. Stopped after it wrote a checkpoint: a new run on the thread
   * with no input runs its unfinished nodes again (their custom events reported before the pause passed
   * over). Stopped before: it is started again as it was (nothing of it ran). Not stopped (it had ended,
   * or it goes on): re-joined or read as a recovered run is.
   */
  private async continuePaused(
    client: Client,
    turn: ActorTurn,
    graphId: string,
    threadId: string,
    signal: AbortSignal,
    handle: RunHandle,
    paused: PausedRun,
  ): Promise<TurnResult> {
    const run = paused.runId === null ? undefined : await abortable(getRun(client, threadId, paused.runId), signal);
    if (run && run.status !== 'interrupted') {
      await turn.output.remember({ [PAUSED_RUN_KEY]: null });
      handle.runId = run.run_id;
      const report = (handle.report = new RunReport(turn.output, reportedEvents(turn.remembered, run.run_id)));
      return await this.recover(client, turn, threadId, run.run_id, signal, report);
    }
    await this.ensureThread(client, turn, threadId, signal);
    const state = await abortable(client.threads.getState(threadId), signal);
    // The thread's last checkpoint is the stopped run's when it ran a step; else the run never started.
    const ran = paused.runId !== null && state.metadata?.run_id === paused.runId;
    const again = !ran && paused.mode !== 'recover';
    if (!again && (state.next ?? []).length === 0) {
      await turn.output.remember({ [PAUSED_RUN_KEY]: null });
      return await this.fromThreadState(client, threadId, signal);
    }
    this.logger.log({
      msg: 'continuing a paused LangGraph run',
      runId: paused.runId,
      from: again ? 'its input' : state.next,
    });
    turn.output.working();
    // The unfinished nodes stream their answer again from its start.
    turn.output.restartText();
    const payload = again ? payloadOf(turn, paused.mode) : { input: null };
    return await this.startRun(client, turn, graphId, threadId, signal, handle, payload, {
      replay: again ? 0 : paused.replay,
      also: { [PAUSED_RUN_KEY]: null },
    });
  }

  /**
   * Starts a run on the thread and follows it to rest, re-joining it if its stream drops. `replay`: custom
   * events its stream begins with that were reported already; `also`: remembered with its run id.
   */
  private async startRun(
    client: Client,
    turn: ActorTurn,
    graphId: string,
    threadId: string,
    signal: AbortSignal,
    handle: RunHandle,
    payload: RunPayload,
    options: { replay?: number; also?: Record<string, unknown> } = {},
  ): Promise<TurnResult> {
    const stream = client.runs.stream(threadId, graphId, {
      ...payload,
      metadata: { cleveragents_task_id: turn.taskId },
      streamMode: STREAM_MODE,
      streamResumable: true,
      onDisconnect: 'continue',
      multitaskStrategy: 'enqueue',
      signal,
      onRunCreated: ({ run_id }) => {
        handle.runId = run_id;
      },
    });
    const report = (handle.report = new RunReport(turn.output, options.replay));
    let followed: Followed;
    try {
      followed = await this.follow(turn, threadId, stream, undefined, handle, report, options.also);
    } catch (error) {
      // The stream broke (a proxy, a network blip) but the run goes on there (`onDisconnect: continue`):
      // re-join it rather than start it again. Before the run existed there is nothing to re-join.
      if (signal.aborted || handle.runId === undefined) throw error;
      return await this.rejoin(client, turn, threadId, handle.runId, signal, error, report);
    }
    const settled = await this.settle(client, threadId, followed, signal);
    if (followed.lostWhileRunning && followed.runId) {
      return await this.rejoin(client, turn, threadId, followed.runId, signal, undefined, report);
    }
    report.finish();
    return settled;
  }

  /**
   * Re-joins a run whose stream dropped, up to REJOIN_ATTEMPTS times, replaying its stream from the start
   * (the answer artifact starts over). A run that ended meanwhile is read from the thread.
   */
  private async rejoin(
    client: Client,
    turn: ActorTurn,
    threadId: string,
    runId: string,
    signal: AbortSignal,
    cause: unknown,
    report: RunReport,
  ): Promise<TurnResult> {
    let last = cause;
    for (let attempt = 1; attempt <= REJOIN_ATTEMPTS; attempt++) {
      if (signal.aborted) return { state: 'canceled' };
      this.logger.warn({
        msg: 'LangGraph stream dropped: re-joining the run',
        runId,
        attempt,
        cause: last === undefined ? 'ended while running' : this.describe(last),
      });
      try {
        const result = await this.recover(client, turn, threadId, runId, signal, report);
        if (!(result.state === 'failed' && result.reason.startsWith(LOST_STREAM))) return result;
        last = undefined;
      } catch (error) {
        if (signal.aborted) throw error;
        last = error;
      }
      await new Promise((resolve) => setTimeout(resolve, REJOIN_BACKOFF_MS * attempt));
    }
    if (last !== undefined) this.logger.warn(`Run ${runId} could not be re-joined: ${this.describe(last)}`);
    return {
      state: 'failed',
      reason: `${LOST_STREAM} ${runId} and could not re-join it after ${REJOIN_ATTEMPTS} attempts`,
    };
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

  /** Creates the session's thread on first use, named after its namespace, owner and context. */
  private async ensureThread(client: Client, turn: ActorTurn, threadId: string, signal: AbortSignal): Promise<void> {
    if (this.knownThreads.has(threadId)) return;
    await abortable(
      client.threads.create({
        threadId,
        ifExists: 'do_nothing',
        metadata: {
          cleveragents_namespace: turn.namespace,
          cleveragents_owner: turn.owner,
          cleveragents_context_id: turn.contextId,
        },
      }),
      signal,
    );
    if (this.knownThreads.size >= 10_000) this.knownThreads.clear();
    this.knownThreads.add(threadId);
  }

  /**
   * Reads a run's stream to its end: remembers the run id before anything else is reported, passes AI
   * tokens and the orchestrator protocol's custom events on in order (those a replayed stream already
   * reported once are passed over), and notes an interrupt, a rejection or an error.
   */
  private async follow(
    turn: ActorTurn,
    threadId: string,
    stream: AsyncIterable<StreamPart>,
    knownRunId: string | undefined,
    handle: RunHandle,
    report: RunReport,
    also: Record<string, unknown> = {},
  ): Promise<Followed> {
    const followed: Followed = { runId: knownRunId };
    report.restart();
    for await (const part of stream) {
      if (part.event === 'metadata') {
        const runId = (part.data as { run_id?: unknown } | null)?.run_id;
        if (followed.runId === undefined && typeof runId === 'string') {
          followed.runId = handle.runId = runId;
          // A run that begins with events reported already (a paused run's nodes run again) says so at once,
          // so that a restarted server re-joining it passes them over too.
          const replayed = report.reported > 0 ? { [REPORTED_EVENTS_KEY]: { runId, count: report.reported } } : {};
          await turn.output.remember({ ...also, ...replayed, threadId, runId });
          turn.output.working();
        }
        continue;
      }
      if (part.event === 'messages' || part.event.startsWith('messages|')) {
        const [chunk] = Array.isArray(part.data) ? (part.data as unknown[]) : [];
        const { type, content } = (chunk ?? {}) as { type?: unknown; content?: unknown };
        const delta = roleOfType(type) === 'assistant' ? contentText(content) : '';
        if (delta) {
          report.text(delta);
          turn.output.text(delta);
        }
      } else if (part.event === 'custom' || part.event.startsWith('custom|')) {
        // Remembered, so that a restarted server re-joining the run does not report them again.
        if (report.custom(part.data) && followed.runId !== undefined) {
          await turn.output.remember({ [REPORTED_EVENTS_KEY]: { runId: followed.runId, count: report.reported } });
        }
      } else if (part.event === 'updates') {
        const interrupts = (part.data as { __interrupt__?: unknown } | null)?.__interrupt__;
        if (Array.isArray(interrupts) && interrupts.length > 0 && !followed.interrupt) {
          followed.interrupt = { value: (interrupts[0] as { value?: unknown } | null)?.value };
        }
        followed.rejection ??= rejectionInUpdates(part.data);
        report.step();
      } else if (part.event === 'error') {
        followed.error = remoteErrorText(part.data);
      }
    }
    return followed;
  }

  /** How a followed run came to rest: the stream's own word, checked against the run's status. */
  private async settle(client: Client, threadId: string, followed: Followed, signal: AbortSignal): Promise<TurnResult> {
    if (followed.error !== undefined) return { state: 'failed', reason: `The LangGraph run failed: ${followed.error}` };
    if (!followed.runId)
      return { state: 'failed', reason: 'The LangGraph server ended the stream before the run started' };
    const run = await abortable(client.runs.get(threadId, followed.runId), signal);
    switch (run.status) {
      case 'success':
        if (followed.interrupt) {
          return {
            state: 'input-required',
            text: interruptQuestion(followed.interrupt.value),
            value: followed.interrupt.value,
          };
        }
        return followed.rejection !== undefined
          ? { state: 'rejected', reason: followed.rejection }
          : { state: 'completed' };
      case 'pending':
      case 'running':
        followed.lostWhileRunning = true;
        return {
          state: 'failed',
          reason: `${LOST_STREAM} ${run.run_id} while it was still ${run.status}`,
        };
      case 'error':
      case 'timeout':
      case 'interrupted':
        return { state: 'failed', reason: endedBadly(run.run_id, run.status) };
    }
  }

  /**
   * Continues a run after our restart: re-joins it while it is pending or running (replaying its
   * stream from the start), else reads how it ended from the thread. Never starts it again.
   */
  private async recover(
    client: Client,
    turn: ActorTurn,
    threadId: string,
    runId: string,
    signal: AbortSignal,
    report: RunReport,
  ): Promise<TurnResult> {
    const run = await abortable(client.runs.get(threadId, runId), signal);
    switch (run.status) {
      case 'pending':
      case 'running': {
        turn.output.working();
        turn.output.restartText();
        // lastEventId -1: the whole resumable stream again, since the answer artifact starts over.
        const stream = client.runs.joinStream(threadId, runId, { lastEventId: '-1', streamMode: STREAM_MODE, signal });
        const followed = await this.follow(turn, threadId, stream, runId, {}, report);
        const settled = await this.settle(client, threadId, followed, signal);
        if (!followed.lostWhileRunning) report.finish();
        return settled;
      }
      case 'success':
        return await this.fromThreadState(client, threadId, signal);
      case 'error':
      case 'timeout':
      case 'interrupted':
        return { state: 'failed', reason: endedBadly(runId, run.status) };
    }
  }

  /** The result of a run that finished while nobody listened, as the thread's state shows it. */
  private async fromThreadState(client: Client, threadId: string, signal: AbortSignal): Promise<TurnResult> {
    const state = await abortable(client.threads.getState(threadId), signal);
    for (const task of state.tasks ?? []) {
      const [interrupt] = task.interrupts ?? [];
      if (interrupt)
        return { state: 'input-required', text: interruptQuestion(interrupt.value), value: interrupt.value };
      if (task.error) return { state: 'failed', reason: `The LangGraph run failed: ${clip(task.error)}` };
    }
    const rejection = rejectionOf(state.values);
    if (rejection !== undefined) return { state: 'rejected', reason: rejection };
    const raw = (state.values as { messages?: unknown } | undefined)?.messages;
    const last = Array.isArray(raw) ? (raw.at(-1) as { type?: unknown; content?: unknown } | undefined) : undefined;
    return roleOfType(last?.type) === 'assistant'
      ? { state: 'completed', text: contentText(last?.content) }
      : { state: 'completed' };
  }

  /**
   * CancelTask and pause: cancels the run with action `interrupt` (it stops; its thread keeps its
   * checkpoints), when `wait` waiting until it stopped. When the run id is not known yet (the abort came
   * before the server answered), cancels the thread's unfinished runs that carry this task's id.
   * Resolves with the id of the run it cancelled, when it knows one.
   */
  private async cancelRemote(
    client: Client,
    threadId: string,
    taskId: string,
    runId: string | undefined,
    wait: boolean,
  ): Promise<string | undefined> {
    try {
      if (runId) {
        await client.runs.cancel(threadId, runId, wait, 'interrupt');
        return runId;
      }
      const runs = await client.runs.list(threadId, { limit: 20 });
      const mine = runs.filter(
        (run) =>
          run.metadata?.cleveragents_task_id === taskId && (run.status === 'pending' || run.status === 'running'),
      );
      await Promise.all(mine.map((run) => client.runs.cancel(threadId, run.run_id, wait, 'interrupt')));
      return mine.length === 1 ? mine[0].run_id : undefined;
    } catch {
      // The task is canceled here either way; a run we could not reach ends on its own.
      return runId;
    }
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
    return `The LangGraph server at ${this.host} ${this.problem(error)}`;
  }

  /** "could not be reached (ECONNREFUSED)", "answered HTTP 404: …": the predicate of a failure. */
  private problem(error: unknown): string {
    const status = statusOf(error);
    const { name, message } = errorParts(error);
    let text: string;
    if (status !== undefined) text = `answered HTTP ${status}: ${clip(remoteDetail(message))}`;
    else if (name === 'TimeoutError' || name === 'AbortError') text = 'did not answer in time';
    else if (isConnectionFailure(error))
      text = `could not be reached (${connectionCode(error) ?? 'connection failed'})`;
    else text = `failed: ${clip(message)}`;
    return this.apiKey ? text.split(this.apiKey).join('***') : text;
  }
}

type RunPayload =
  { input: ReturnType<typeof startInput> | null } | { command: { resume: ReturnType<typeof resumeValue> } };

/** What a run started for a turn of this mode is given: a new input, or the answer to an interrupt. */
function payloadOf(turn: ActorTurn, mode: ActorTurn['mode']): RunPayload {
  return mode === 'resume' ? { command: { resume: resumeValue(turn.input) } } : { input: startInput(turn) };
}

/** A run, or undefined when the server knows none by this id. */
async function getRun(client: Client, threadId: string, runId: string) {
  try {
    return await client.runs.get(threadId, runId);
  } catch (error) {
    if (statusOf(error) === 404) return undefined;
    throw error;
  }
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

function endedBadly(runId: string, status: string): string {
  switch (status) {
    case 'interrupted':
      return `LangGraph run ${runId} was cancelled on the LangGraph server`;
    case 'timeout':
      return `LangGraph run ${runId} timed out on the LangGraph server`;
    default:
      return `LangGraph run ${runId} failed on the LangGraph server`;
  }
}

function clip(text: string): string {
  return text.length > MAX_REASON_DETAIL ? `${text.slice(0, MAX_REASON_DETAIL)}…` : text;
}

/** The `error` event's data: `{error, message}` from the server, or a bare string. */
function remoteErrorText(data: unknown): string {
  if (typeof data === 'string') return clip(data);
  const { error, message } = (data ?? {}) as { error?: unknown; message?: unknown };
  const parts = [error, message].filter((part): part is string => typeof part === 'string' && part !== '');
  return clip(parts.join(': ') || JSON.stringify(data));
}

/** `HTTP 404: {"detail":"..."}` → the detail, when the body is the server's JSON error. */
function remoteDetail(message: string): string {
  const body = message.replace(/^HTTP \d+: /, '');
  try {
    const parsed = JSON.parse(body) as { detail?: unknown; message?: unknown };
    const detail = parsed.detail ?? parsed.message;
    if (typeof detail === 'string') return detail;
  } catch {
    // Not JSON: the text as it came.
  }
  return body;
}

function statusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : undefined;
}

/**
 * Name and message of a thrown value. Duck-typed, not `instanceof Error`: fetch's errors may come from
 * another realm (Node's own undici under a VM context such as Jest's).
 */
function errorParts(error: unknown): { name: string; message: string } {
  if (error !== null && typeof error === 'object') {
    const { name, message } = error as { name?: unknown; message?: unknown };
    if (typeof message === 'string') return { name: typeof name === 'string' ? name : 'Error', message };
  }
  return { name: 'Error', message: String(error) };
}

function isConnectionFailure(error: unknown): boolean {
  const { name, message } = errorParts(error);
  return (
    name === 'ConnectionError' ||
    /fetch failed|ECONNREFUSED|Unable to connect/.test(message) ||
    connectionCode(error) !== undefined
  );
}

/** ECONNREFUSED, ENOTFOUND… from the error or its causes. */
function connectionCode(error: unknown, depth = 0): string | undefined {
  if (error === null || typeof error !== 'object' || depth > 4) return undefined;
  const { code, cause, errors } = error as { code?: unknown; cause?: unknown; errors?: unknown };
  if (typeof code === 'string' && /^(E[A-Z]+|UND_ERR)/.test(code)) return code;
  if (Array.isArray(errors)) {
    for (const inner of errors) {
      const found = connectionCode(inner, depth + 1);
      if (found) return found;
    }
  }
  return connectionCode(cause, depth + 1) ?? /\b(E[A-Z]{4,})\b/.exec(errorParts(error).message)?.[1];
}

/** Settles with `promise`, or rejects as soon as `signal` aborts (the SDK's reads take no signal here). */
async function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) throw signal.reason;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([promise, aborted]);
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}
