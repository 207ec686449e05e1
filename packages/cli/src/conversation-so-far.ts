import type { Task } from '@a2a-js/sdk';
import type { PlanDataView } from '@cleveragents/contract';
import type { CleverAgentsClient } from '@cleveragents/client/node';
import { describeError, type GlobalOptions } from './context.js';
import {
  HISTORY_PAGE_SIZE,
  conversationTurns,
  lastTurns,
  planOf,
  readNewestTasks,
  waitingOf,
  type ConversationTurn,
  type Waiting,
} from './session-history.js';
import type { Style } from './style.js';

/**
 * A resumed session as both chats show it (the line-mode one and the interactive UI): its last turns, how
 * many earlier ones are left out, its plan, and what its last task waits for, which the chat answers in place.
 */

export interface ConversationHost {
  client: CleverAgentsClient;
  say: (text: string) => void;
  style: Style;
  options: GlobalOptions;
}

export interface ConversationSoFar {
  plan?: PlanDataView;
  waiting?: Waiting;
}

/** What both chats keep of the conversation they are in. */
export interface ChatConversation {
  /** The session (A2A contextId), once there is one. */
  contextId?: string;
  plan?: PlanDataView;
  /** A task left waiting (a gate nobody answered, a question): /cancel ends it. */
  waitingTaskId?: string;
  /** A task waiting for an answer in words: the next message answers it. */
  answersTask?: string;
}

/** A turn of the conversation so far, as a chat shows it (its texts made safe by session-history). */
export function turnLines(turn: ConversationTurn, style: Style): string {
  const lines: string[] = [];
  if (turn.said) lines.push(`${style.cyan('you:')} ${turn.said}`);
  if (turn.answer) lines.push(`${style.magenta('agent:')} ${turn.answer}`);
  else if (turn.state !== 'completed' && turn.state !== 'input-required') {
    lines.push(style.dim(`(task ${turn.state})`));
  }
  return lines.join('\n');
}

/**
 * Reads the session's newest tasks and says its last turns (with how many earlier ones are not shown);
 * resolves to its plan and what waits. A history the server will not give is said, and nothing waits then.
 */
export async function showConversation(host: ConversationHost, sessionId: string): Promise<ConversationSoFar> {
  const { client, say, style } = host;
  let read: { items: unknown[]; total: number };
  try {
    read = await readNewestTasks((pageToken) =>
      client.sessions.history({ sessionId, pageSize: HISTORY_PAGE_SIZE, pageToken }),
    );
  } catch (err) {
    say(describeError(err, style, host.options));
    return {};
  }
  const { shown, earlier } = lastTurns(conversationTurns(read.items), read.total);
  if (earlier > 0) {
    say(style.dim(`(${earlier} earlier ${earlier === 1 ? 'turn' : 'turns'} not shown: sessions history)`));
  }
  for (const turn of shown) say(turnLines(turn, style));
  return { plan: planOf(read.items), waiting: waitingOf(read.items) };
}

/**
 * Takes the session `conversation` names up: says its last turns, keeps its plan, and deals with what its
 * last task waits for — a question, or what this chat cannot answer, is said (`note`) and left waiting; an
 * approval or a client request is answered in place (`answer`, a turn on that task). A code when the chat ends.
 */
export async function takeUp(
  host: ConversationHost,
  conversation: ChatConversation,
  toolsOn: boolean,
  note: (text: string) => void,
  answer: (task: Task) => Promise<number | undefined>,
): Promise<number | undefined> {
  const { plan, waiting } = await showConversation(host, conversation.contextId!);
  conversation.plan = plan;
  if (!waiting) return undefined;
  const said = waitingNote(waiting, toolsOn);
  if (said === undefined) return answer(waiting.task);
  conversation.waitingTaskId = waiting.task.id;
  if (waiting.kind === 'question') conversation.answersTask = waiting.task.id;
  note(host.style.yellow(said));
  return undefined;
}

/** What a chat says of a waiting task it does not answer at once; undefined for those it answers in place. */
function waitingNote(waiting: Waiting, toolsOn: boolean): string | undefined {
  switch (waiting.kind) {
    case 'question':
      return waiting.question || 'The agent waits for your answer.';
    case 'malformed':
      return 'The task waits on a request this client cannot read: /cancel ends it.';
    case 'client-request':
      return toolsOn ? undefined : 'The task waits for this client, whose tools are off here: /cancel ends it.';
    case 'approval':
      return undefined;
  }
}
