import type { Logger } from '@nestjs/common';
import type { Client, ThreadState } from '@langchain/langgraph-sdk';
import { trace } from '@opentelemetry/api';
import type { ActorTurn, TurnResult } from '../actor-turn.js';
import { isAborted } from '../../common/abort.js';
import { clip, endedBadly, remoteErrorText, statusOf } from './langgraph.errors.js';
import {
  PAUSED_RUN_KEY,
  pausedRunOf,
  type PausedRun,
  rejectionInUpdates,
  rejectionOf,
  REPORTED_EVENTS_KEY,
  reportedEvents,
  RunReport,
  startInput,
} from './langgraph.mapping.js';
import { contentText, interruptQuestion, resumeValue, roleOfType } from '../turn-values.js';
import { CA_ATTEMPT, CA_LANGGRAPH_OPERATION, CA_REJOIN_EVENT } from '../../telemetry/attributes.js';
import { outgoingTraceHeaders } from '../../telemetry/outbound.js';
import { setAttributes } from '../../telemetry/tracing.js';
import type { Retried } from './langgraph.telemetry.js';

/**
 * `messages-tuple` streams the AI tokens; `updates` carries the graph's interrupts and a rejection its
 * nodes write; `custom` the orchestrator protocol's events (plan, tool call and result, usage).
 */
const STREAM_MODE: ('messages-tuple' | 'updates' | 'custom')[] = ['messages-tuple', 'updates', 'custom'];

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
/**
 * A thread's state as a LangGraph server answers it over HTTP: the SDK types every list as present, but
 * the JSON of another server version (or a stand-in) may leave out `next`, `tasks` or a task's `interrupts`.
 */
type RemoteThreadState = Omit<ThreadState, 'next' | 'tasks'> & {
  next?: ThreadState['next'];
  tasks?: (Omit<ThreadState['tasks'][number], 'interrupts'> & {
    interrupts?: ThreadState['tasks'][number]['interrupts'];
  })[];
};

const LOST_STREAM = 'Lost the stream of LangGraph run';
/** Re-joins of a dropped stream before the turn fails, and the pause before each (× attempt). */
const REJOIN_ATTEMPTS = 3;
const REJOIN_BACKOFF_MS = 200;

/** What a turn knows of its run: its id as soon as any source tells it, and what the run reported. */
export interface RunHandle {
  runId?: string;
  report?: RunReport;
}

/**
 * The runs of one LangGraph server as turns use them: start a run on a session's thread and follow its
 * stream to rest, re-join a run whose stream dropped or that outlived a restart, continue a paused one,
 * read how a run ended from its thread, and cancel. The backend (langgraph.backend.ts) owns the client,
 * the readiness and the turn's abort wiring; this holds what happens between a turn and its run.
 */
export class LangGraphRuns {
  /** Threads known to exist, so a turn on a known thread skips the create call. Bounded. */
  private readonly knownThreads = new Set<string>();

  constructor(
    private readonly client: Client,
    private readonly logger: Logger,
    /** A failure as the log reads it (the server's host, never the API key). */
    private readonly describe: (error: unknown) => string,
    /** Counts a re-join of a run whose stream ended early (cleveragents_outbound_retries). */
    private readonly retried?: Retried,
  ) {}

  /** A turn on its thread: a paused run continued, a remembered run re-joined, or a new run started. */
  async runOnThread(
    turn: ActorTurn,
    graphId: string,
    threadId: string,
    signal: AbortSignal,
    handle: RunHandle,
  ): Promise<TurnResult> {
    if (signal.aborted) return { state: 'canceled' };
    const span = trace.getActiveSpan();
    const paused = turn.mode === 'recover' ? pausedRunOf(turn.remembered) : undefined;
    if (paused) {
      if (span) setAttributes(span, { [CA_LANGGRAPH_OPERATION]: 'continue' });
      return await this.continuePaused(turn, graphId, threadId, signal, handle, paused);
    }
    const remembered = typeof turn.remembered.runId === 'string' ? turn.remembered.runId : undefined;
    if (turn.mode === 'recover' && remembered) {
      if (span) setAttributes(span, { [CA_LANGGRAPH_OPERATION]: 'join' });
      handle.runId = remembered;
      const report = (handle.report = new RunReport(turn.output, reportedEvents(turn.remembered, remembered)));
      return await this.recover(turn, threadId, remembered, signal, report);
    }
    if (span) setAttributes(span, { [CA_LANGGRAPH_OPERATION]: 'create' });
    await this.ensureThread(turn, threadId, signal);
    return await this.startRun(turn, graphId, threadId, signal, handle, payloadOf(turn, turn.mode));
  }

  /**
   * Continues a run `plan/pause` stopped. Stopped after it wrote a checkpoint: a new run on the thread
   * with no input runs its unfinished nodes again (their custom events reported before the pause passed
   * over). Stopped before: it is started again as it was (nothing of it ran). Not stopped (it had ended,
   * or it goes on): re-joined or read as a recovered run is.
   */
  private async continuePaused(
    turn: ActorTurn,
    graphId: string,
    threadId: string,
    signal: AbortSignal,
    handle: RunHandle,
    paused: PausedRun,
  ): Promise<TurnResult> {
    const run =
      paused.runId === null ? undefined : await abortable(getRun(this.client, threadId, paused.runId), signal);
    if (run && run.status !== 'interrupted') {
      await turn.output.remember({ [PAUSED_RUN_KEY]: null });
      handle.runId = run.run_id;
      const report = (handle.report = new RunReport(turn.output, reportedEvents(turn.remembered, run.run_id)));
      return await this.recover(turn, threadId, run.run_id, signal, report);
    }
    await this.ensureThread(turn, threadId, signal);
    const state = await this.threadState(threadId, signal);
    // The thread's last checkpoint is the stopped run's when it ran a step; else the run never started.
    const ran = paused.runId !== null && state.metadata?.run_id === paused.runId;
    const again = !ran && paused.mode !== 'recover';
    if (!again && (state.next ?? []).length === 0) {
      await turn.output.remember({ [PAUSED_RUN_KEY]: null });
      return await this.fromThreadState(threadId, signal);
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
    return await this.startRun(turn, graphId, threadId, signal, handle, payload, {
      replay: again ? 0 : paused.replay,
      also: { [PAUSED_RUN_KEY]: null },
    });
  }

  /**
   * Starts a run on the thread and follows it to rest, re-joining it if its stream drops. `replay`: custom
   * events its stream begins with that were reported already; `also`: remembered with its run id.
   */
  private async startRun(
    turn: ActorTurn,
    graphId: string,
    threadId: string,
    signal: AbortSignal,
    handle: RunHandle,
    payload: RunPayload,
    options: { replay?: number; also?: Record<string, unknown> } = {},
  ): Promise<TurnResult> {
    const stream = this.client.runs.stream(threadId, graphId, {
      ...payload,
      // The trace context again, where the graph's nodes read it (config.metadata): a LangGraph server does
      // not continue a traceparent header into the run it starts.
      metadata: { cleveragents_task_id: turn.taskId, ...outgoingTraceHeaders() },
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
      return await this.rejoin(turn, threadId, handle.runId, signal, error, report);
    }
    const settled = await this.settle(threadId, followed, signal);
    if (followed.lostWhileRunning && followed.runId) {
      return await this.rejoin(turn, threadId, followed.runId, signal, undefined, report);
    }
    report.finish();
    return settled;
  }

  /**
   * Re-joins a run whose stream dropped, up to REJOIN_ATTEMPTS times, replaying its stream from the start
   * (the answer artifact starts over). A run that ended meanwhile is read from the thread.
   */
  private async rejoin(
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
      this.retried?.(attempt === 1 || last === undefined ? 'stream_ended' : 'error');
      trace.getActiveSpan()?.addEvent(CA_REJOIN_EVENT, { [CA_ATTEMPT]: attempt });
      this.logger.warn({
        msg: 'LangGraph stream dropped: re-joining the run',
        runId,
        attempt,
        cause: last === undefined ? 'ended while running' : this.describe(last),
      });
      try {
        const result = await this.recover(turn, threadId, runId, signal, report);
        if (!(result.state === 'failed' && result.reason.startsWith(LOST_STREAM))) return result;
        last = undefined;
      } catch (error) {
        if (isAborted(signal)) throw error;
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

  /** Creates the session's thread on first use, named after its namespace, owner and context. */
  private async ensureThread(turn: ActorTurn, threadId: string, signal: AbortSignal): Promise<void> {
    if (this.knownThreads.has(threadId)) return;
    await abortable(
      this.client.threads.create({
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
  private async settle(threadId: string, followed: Followed, signal: AbortSignal): Promise<TurnResult> {
    if (followed.error !== undefined) return { state: 'failed', reason: `The LangGraph run failed: ${followed.error}` };
    if (!followed.runId) {
      return { state: 'failed', reason: 'The LangGraph server ended the stream before the run started' };
    }
    const run = await abortable(this.client.runs.get(threadId, followed.runId), signal);
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
    turn: ActorTurn,
    threadId: string,
    runId: string,
    signal: AbortSignal,
    report: RunReport,
  ): Promise<TurnResult> {
    const run = await abortable(this.client.runs.get(threadId, runId), signal);
    switch (run.status) {
      case 'pending':
      case 'running': {
        turn.output.working();
        turn.output.restartText();
        // lastEventId -1: the whole resumable stream again, since the answer artifact starts over.
        const stream = this.client.runs.joinStream(threadId, runId, {
          lastEventId: '-1',
          streamMode: STREAM_MODE,
          signal,
        });
        const followed = await this.follow(turn, threadId, stream, runId, {}, report);
        const settled = await this.settle(threadId, followed, signal);
        if (!followed.lostWhileRunning) report.finish();
        return settled;
      }
      case 'success':
        return await this.fromThreadState(threadId, signal);
      case 'error':
      case 'timeout':
      case 'interrupted':
        return { state: 'failed', reason: endedBadly(runId, run.status) };
    }
  }

  /** A thread's state as the LangGraph server answers it (see RemoteThreadState). */
  private async threadState(threadId: string, signal: AbortSignal): Promise<RemoteThreadState> {
    return await abortable(this.client.threads.getState(threadId), signal);
  }

  /** The result of a run that finished while nobody listened, as the thread's state shows it. */
  private async fromThreadState(threadId: string, signal: AbortSignal): Promise<TurnResult> {
    const state = await this.threadState(threadId, signal);
    for (const task of state.tasks ?? []) {
      const interrupt = task.interrupts?.at(0);
      if (interrupt) {
        return { state: 'input-required', text: interruptQuestion(interrupt.value), value: interrupt.value };
      }
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
  async cancelRemote(
    threadId: string,
    taskId: string,
    runId: string | undefined,
    wait: boolean,
  ): Promise<string | undefined> {
    try {
      if (runId) {
        await this.client.runs.cancel(threadId, runId, wait, 'interrupt');
        return runId;
      }
      const runs = await this.client.runs.list(threadId, { limit: 20 });
      const mine = runs.filter(
        (run) =>
          run.metadata?.cleveragents_task_id === taskId && (run.status === 'pending' || run.status === 'running'),
      );
      await Promise.all(mine.map((run) => this.client.runs.cancel(threadId, run.run_id, wait, 'interrupt')));
      return mine.length === 1 ? mine[0].run_id : undefined;
    } catch {
      // The task is canceled here either way; a run we could not reach ends on its own.
      return runId;
    }
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
