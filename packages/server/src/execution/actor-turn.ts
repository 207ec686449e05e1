import type { Message, Part } from '@a2a-js/sdk';
import type { StoredA2aAgent } from './a2a/a2a-credential.js';
import type { OrchestratorSetup, PlanEntry, ToolCallReport, ToolResultReport } from './orchestrator/protocol.js';

/**
 * The contract between the session workflow (src/turn/) and the backends that run orchestrators
 * (docs/protocol.md §5). Backends know nothing of A2A's wire types beyond the user's Message: the workflow
 * turns what they report (TurnOutput calls, then a TurnResult) into A2A status and artifact events
 * and stores them with the task.
 */

/** The model an actor talks to (registry `actor` spec, `model`). Credentials are server configuration. */
export interface ActorModelSettings {
  provider?: string;
  model: string;
  temperature?: number;
  topP?: number;
  maxTokens?: number;
  baseUrl?: string;
  /** What its tokens cost (registry `model.pricing`): the cost metric is recorded only with one. */
  pricing?: ModelPricing | null;
}

/** A model's price per million tokens, input and output, in `currency` (ISO 4217; USD unless given). */
export interface ModelPricing {
  inputPerMillionTokens?: number | null;
  outputPerMillionTokens?: number | null;
  currency?: string | null;
}

/** An orchestrator definition, as the registry holds it, resolved when a turn starts. */
export interface ActorDefinition {
  /** The registry name (`default` unless the session names another). */
  name: string;
  /** What the actor is for (the registry's `description`): how a sub-agent is described to the model. */
  description?: string;
  /** Remote: a graph or assistant id on the LangGraph Platform / Agent Server. */
  graphId?: string;
  /** Local: the in-process graph to run (`orchestrator`). */
  localGraph?: string;
  /** An external A2A agent: its URL and its credential, sealed as the registry stores it. */
  a2a?: StoredA2aAgent;
  model?: ActorModelSettings;
  systemPrompt?: string;
  profile?: string;
  tools: readonly string[];
}

/** What a turn is given: the user's text and data parts, and the message itself. */
export interface TurnInput {
  /** The text parts of the user's message, joined with blank lines. */
  text: string;
  /** The data parts' values, in order. */
  data: readonly Record<string, unknown>[];
  message: Message;
}

/**
 * What a running turn reports while it runs. Calls are cheap and synchronous (events are queued in
 * order), except `remember`, which is durable when it resolves.
 */
export interface TurnOutput {
  /** The task is being worked on; `note`, when given, becomes the status message. */
  working(note?: string): void;
  /** Appends streamed text (a token, a chunk) to the turn's answer artifact. */
  text(delta: string): void;
  /** Starts the answer artifact over (a recovered run that streams its answer again from the start). */
  restartText(): void;
  /** An artifact other than the answer (an external agent's files or data), passed on as it came. */
  artifact(update: ArtifactChunk): void;
  /**
   * Stores backend handles with the task (a remote run id, a thread id), so that a later turn or a
   * restarted server finds them in `ActorTurn.remembered`. Resolves once written to the database.
   */
  remember(data: Record<string, unknown>): Promise<void>;
  /** The orchestrator wrote or updated its plan: the whole entry list as it now stands. */
  plan(entries: PlanEntry[]): void;
  /** A tool call is about to run (after its gate, with the arguments it runs with). */
  toolCall(call: ToolCallReport): void;
  /** What a tool call gave back, or why it failed (rejected, client error, unknown tool). */
  toolResult(result: ToolResultReport): void;
  /** Tokens a model call used (prompt and completion, or an estimate), counted against the budget. */
  usage(tokens: number): void;
}

/** A chunk of an artifact a backend passes on: its own id (unique in the task), name and parts. */
export interface ArtifactChunk {
  artifactId: string;
  name: string;
  parts: Part[];
  append: boolean;
  lastChunk: boolean;
}

/** The external agent whose task waits for input: who it is and what it asked. */
export interface RemoteAsker {
  /** The actor that is the agent. */
  actor: string;
  /** The origin of the agent's URL. */
  origin: string;
  /** The agent's id of its waiting task. */
  remoteTaskId: string;
  /** The id of the agent's status message that asked, when it gave one. */
  messageId?: string;
}

/** The server's record of a foreign request, as the interrupt that shows the request names it. */
export interface ForeignGate {
  approvalId: string;
  requestId: string;
  expiresAt?: string;
  onTimeout?: string;
}

/** How a turn came to rest. */
export type TurnResult =
  /** Done. `text`, when given, is the final answer (else the streamed text is). */
  | { state: 'completed'; text?: string }
  /**
   * The graph interrupted: the client must answer. `value` is the interrupt's value (JSON); `foreign` when
   * a third party (an external A2A agent) gave it, so it never passes as a gate or client request of ours.
   */
  | {
      state: 'input-required';
      text: string;
      value?: unknown;
      foreign?: true;
      /** An external A2A agent that asks: recorded as an approval of kind `agent` (docs/plans.md#approvals). */
      asker?: RemoteAsker;
      /** The approval recorded for a foreign request: published with its interrupt, so a client can answer it. */
      gate?: ForeignGate;
    }
  /** The client rejected the plan at its gate: nothing was run. */
  | { state: 'rejected'; reason: string }
  /** Broke: `reason` is shown to the client (no secrets, no stack). */
  | { state: 'failed'; reason: string }
  /** Stopped because `signal` aborted (CancelTask). */
  | { state: 'canceled' };

/** `signal.reason` when CancelTask stopped the turn. */
export const TURN_CANCELED = 'canceled';
/** `signal.reason` when the server is stopping: detach from the run, cancel nothing. */
export const TURN_DETACHED = 'detached';
/**
 * `signal.reason` when `plan/pause` stopped the turn: stop the run where it is, keeping what it has done
 * (a remote run is cancelled so that its thread keeps its last checkpoint), so that a later `recover`
 * turn goes on from there; the result is ignored.
 */
export const TURN_PAUSED = 'paused';

/** One turn of one task: a new message, an answer to an interrupt, or a run to recover after restart. */
export interface ActorTurn {
  taskId: string;
  /** The session (= A2A context) the task belongs to. */
  contextId: string;
  namespace: string;
  owner: string;
  actor: ActorDefinition;
  /**
   * - `start`: a new task (or a follow-up message on a task that is not waiting for input).
   * - `resume`: the task was `input-required`; `input` answers the interrupt (remote: Command({resume})).
   * - `recover`: the server restarted while the task was working; continue the run (remote: re-join
   *   it with the remembered run id; local: resume from the checkpoint). `input` is the task's last user
   *   message.
   */
  mode: 'start' | 'resume' | 'recover';
  input: TurnInput;
  /**
   * Gates, tools and plan of the task (docs/protocol.md §5): given to the graph with a task's first input (a
   * `start`); a resumed or recovered run keeps what its first input set.
   */
  setup: OrchestratorSetup;
  /** What `output.remember` stored for this task, `{}` at first. */
  remembered: Readonly<Record<string, unknown>>;
  /** The external A2A agents the actor's `tools` name, by name: offered to the model as `agent` tools. */
  subAgents?: Readonly<Record<string, ActorDefinition>>;
  /**
   * Aborted by CancelTask (reason `TURN_CANCELED`): stop the run — a remote one with a run cancel — and
   * report `canceled`. Aborted with reason `TURN_DETACHED` when this server stops: stop streaming and
   * working here, but cancel nothing remote (the run goes on, and is re-joined after the restart); the
   * result is ignored. Aborted with reason `TURN_PAUSED` by `plan/pause`: stop the run but keep its
   * progress (see TURN_PAUSED), for a `recover` turn to continue.
   */
  signal: AbortSignal;
  output: TurnOutput;
}

/** What `_cleveragents/context/assemble` shows: exactly what the next model call would be given. */
export interface AssembledContext {
  model: string | undefined;
  messages: { role: 'system' | 'user' | 'assistant' | 'tool'; content: string }[];
  /** Rough count (characters ÷ 4) used for `maxTokens` trimming. */
  estimatedTokens: number;
  /** Older messages left out to fit `maxTokens`. */
  omittedMessages: number;
}

/** Whose context `assemble` reads, and how much of it. */
export interface AssembleRequest {
  contextId: string;
  namespace: string;
  owner: string;
  actor: ActorDefinition;
  maxTokens?: number;
}

/** What /readyz and `_cleveragents/diagnostics/*` report about an actor backend. */
export interface ActorBackendReadiness {
  ready: boolean;
  detail: string;
}

/** The backends that run turns, as `task_runs.backend` records them. */
export type TurnBackendName = 'local' | 'langgraph' | 'a2a';

/**
 * A backend that runs orchestrator turns (`local`, `langgraph`). `run` resolves when the turn rests:
 * completed, failed, waiting for input, or canceled after `signal` aborted. It never throws for what
 * the model or remote server did (that is a `failed` result); a throw is a bug and fails the task
 * with a generic message.
 */
export interface TurnBackend {
  readonly name: TurnBackendName;
  /** Cheap and synchronous: may be called by a load balancer's probe on every request. */
  readiness(): ActorBackendReadiness;
  run(turn: ActorTurn): Promise<TurnResult>;
  /** The next model input of a session (`_cleveragents/context/assemble`). */
  assemble(session: AssembleRequest): Promise<AssembledContext>;
}
