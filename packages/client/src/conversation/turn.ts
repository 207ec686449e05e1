import { SendMessageRequest, type StreamResponse, type Task } from '@a2a-js/sdk';
import {
  APPROVAL_RESPONSE_TYPE,
  CLIENT_CAPABILITIES_KEY,
  CLIENT_REQUEST_TYPE,
  CLIENT_RESPONSE_TYPE,
  ClientRequestIds,
  RPC_CODES,
  decode,
  type ApprovalDecision,
  type ApprovalRequest,
  type ClientCallResult,
  type ClientCapabilities,
  type ClientRequest,
} from '@cleveragents/contract';
import {
  INTERRUPTED_STATES,
  TurnEventReader,
  pendingRequestOf,
  type MalformedPart,
  type TurnEvent,
  type TurnState,
} from './events.js';

/** Streams one SendStreamingMessage (the library's `stream`, which re-joins a dropped stream). */
export type StreamFn = (request: SendMessageRequest) => AsyncIterable<StreamResponse>;

/** How the user (or their flags) answered an approval request; `undefined`: not answered. */
export interface ApprovalAnswer {
  decision: ApprovalDecision;
  /** `edit`: the edited plan entries, or the edited tool arguments. */
  edited?: unknown;
  /** `reject`: why, in the person's words (the agent is told it). */
  reason?: string;
}

export interface TurnHandlers {
  /** Everything that happens, in order. */
  onEvent?(event: TurnEvent): void;
  /** Decides an approval gate; `undefined` leaves it unanswered (the turn ends waiting). */
  decide?(request: ApprovalRequest): Promise<ApprovalAnswer | undefined>;
  /** Runs the client-side calls the agent asked for; `undefined` leaves them unanswered. */
  runClientCalls?(request: ClientRequest): Promise<ClientCallResult[] | undefined>;
}

export interface TurnInput {
  text: string;
  /** The session (A2A context) to continue. */
  contextId?: string;
  /** A task waiting for input to answer instead of starting a new one. */
  taskId?: string;
  /**
   * A task waiting on an approval or a client request, as read (a resumed session's last task): what it
   * waits for is answered first, through the handlers, and no text is sent. When it waits on neither (a
   * question), the outcome says `unanswered: 'input'` after no round: the next message answers it.
   */
  waiting?: Task;
  /** Declared in the message's metadata so the agent offers the matching tools. */
  capabilities?: ClientCapabilities;
  metadata?: Record<string, unknown>;
}

export interface TurnOutcome {
  state: TurnState;
  taskId?: string;
  contextId?: string;
  /** The answer as streamed (or the agent's message). */
  answer: string;
  /** The final status message's text (a failure's reason, a question). */
  statusText?: string;
  /**
   * Set when the turn ended waiting on a request nobody answered; `malformed`: one this client could not read
   * (a `warning` event said why), which only canceling the task ends.
   */
  unanswered?: 'approval' | 'client-request' | 'input' | 'malformed';
  /** How many messages were sent (the first, then one per answered request). */
  rounds: number;
}

/** A safety stop against an agent that asks forever. */
const MAX_ROUNDS = 200;

function messageRequest(
  text: string,
  data: Record<string, unknown>[],
  ids: { contextId?: string; taskId?: string },
  metadata: Record<string, unknown> | undefined,
): SendMessageRequest {
  const parts = [...(text ? [{ text }] : []), ...data.map((value) => ({ data: value }))];
  return SendMessageRequest.fromJSON({
    message: {
      messageId: globalThis.crypto.randomUUID(),
      role: 'ROLE_USER',
      parts,
      ...(ids.contextId ? { contextId: ids.contextId } : {}),
      ...(ids.taskId ? { taskId: ids.taskId } : {}),
      ...(metadata ? { metadata } : {}),
    },
    configuration: { returnImmediately: false },
  });
}

/**
 * One conversation turn to its end: the user's message, then — while the task waits on an approval
 * or a client request and a handler answers it — the answer on the same task, until the task ends or
 * waits on something nobody answered. The UI sees every step through `onEvent`.
 */
export async function runTurn(
  stream: StreamFn,
  input: TurnInput,
  handlers: TurnHandlers = {},
  /** Follow a task already running (SubscribeToTask) instead of sending `input.text` first. */
  follow?: () => AsyncIterable<StreamResponse>,
): Promise<TurnOutcome> {
  const reader = new TurnEventReader();
  const emit = (events: TurnEvent[]): void => {
    for (const event of events) handlers.onEvent?.(event);
  };
  const metadata = {
    ...(input.metadata ?? {}),
    ...(input.capabilities ? { [CLIENT_CAPABILITIES_KEY]: input.capabilities } : {}),
  };
  let request = messageRequest(
    input.text,
    [],
    { contextId: input.contextId, taskId: input.taskId },
    Object.keys(metadata).length > 0 ? metadata : undefined,
  );
  let rounds = 0;
  // A waiting task read elsewhere: what it waits for is known without a round (its events were shown there).
  let primed = input.waiting !== undefined;
  if (input.waiting) reader.read({ payload: { $case: 'task', value: input.waiting } });
  for (;;) {
    if (!primed) {
      const events = rounds === 0 && follow ? follow() : stream(request);
      rounds += 1;
      for await (const event of events) emit(reader.read(event));
    }
    primed = false;
    const outcome = (unanswered?: TurnOutcome['unanswered']): TurnOutcome => ({
      state: reader.state,
      taskId: reader.taskId,
      contextId: reader.contextId,
      answer: reader.answerText,
      statusText: reader.statusParts ? textOf(reader.statusParts) || undefined : undefined,
      ...(unanswered ? { unanswered } : {}),
      rounds,
    });
    if (!INTERRUPTED_STATES.has(reader.state) || rounds >= MAX_ROUNDS) return outcome();
    const pending = reader.state === 'input-required' ? pendingRequestOf(reader.statusParts) : undefined;
    if (!pending || !reader.taskId) return outcome('input');
    const ids = { contextId: reader.contextId, taskId: reader.taskId };
    if ('malformed' in pending) {
      // Nothing of it runs. A client request whose calls can be named is refused call by call, so the agent may ask again.
      const refused = handlers.runClientCalls ? refusalsOf(pending.malformed) : undefined;
      if (!refused) return outcome('malformed');
      request = messageRequest('', [{ type: CLIENT_RESPONSE_TYPE, responses: refused }], ids, undefined);
    } else if ('approval' in pending) {
      const answer = await handlers.decide?.(pending.approval);
      if (!answer) return outcome('approval');
      const response = {
        type: APPROVAL_RESPONSE_TYPE,
        requestId: pending.approval.requestId,
        decision: answer.decision,
        ...(answer.decision === 'edit' ? { edited: answer.edited } : {}),
        ...(answer.decision === 'reject' && answer.reason ? { reason: answer.reason } : {}),
      };
      request = messageRequest('', [response], ids, undefined);
    } else {
      const responses = await handlers.runClientCalls?.(pending.clientRequest);
      if (!responses) return outcome('client-request');
      request = messageRequest('', [{ type: CLIENT_RESPONSE_TYPE, responses }], ids, undefined);
    }
  }
}

/**
 * The refusal of each call of a client request that did not decode, naming what is wrong; undefined when it
 * is no client request or its calls cannot all be named (then nothing can answer it).
 */
export function refusalsOf(malformed: MalformedPart): ClientCallResult[] | undefined {
  if (malformed.part !== CLIENT_REQUEST_TYPE) return undefined;
  const named = decode(ClientRequestIds, malformed.value);
  if (!named.ok) return undefined;
  const ids = named.value.requests.map((call) => call.id);
  if (new Set(ids).size !== ids.length) return undefined;
  const said = (v: { field: string; description: string }) => `${v.field}: ${v.description}`;
  return ids.map((id, i) => {
    const at = `requests[${i}]`;
    const own = malformed.violations.filter((v) => v.field === at || v.field.startsWith(`${at}.`));
    const why =
      own.length > 0
        ? own.slice(0, 3).map(said).join('; ')
        : `the request it came in is malformed (${said(malformed.violations[0])})`;
    // The field as the call names it (`params.path`), as a client's own refusals do.
    const field = own[0]?.field.slice(at.length + 1);
    return {
      id,
      error: {
        code: RPC_CODES.INVALID_PARAMS,
        message: `Not run: ${why}`,
        data: { reason: 'INVALID_PARAMS', ...(field ? { field } : {}) },
      },
    };
  });
}

function textOf(parts: NonNullable<TurnEventReader['statusParts']>): string {
  return parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
}
