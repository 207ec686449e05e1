import { Role, Task } from '@a2a-js/sdk';
import {
  ANSWER_ARTIFACT,
  TurnEventReader,
  pendingRequestOf,
  textOfParts,
  turnState,
  type TurnState,
} from '@cleveragents/client';
import type { ApprovalRequest, ClientRequest, PlanDataView } from '@cleveragents/contract';
import { safeText } from './safe-text.js';

/**
 * A session's conversation as a resumed chat shows it, read from `_cleveragents/session/history`: each task
 * a turn (what the person said, what the agent answered), and what the last task waits for. Pure, for
 * every UI of the chat; every text in it comes from the server and is made safe (safeText) and bounded here.
 */

/** How many turns a resumed conversation shows unless told. */
export const SHOWN_TURNS = 10;
/** The longest text a turn shows of one side; the rest is counted, not shown. */
export const MAX_TURN_TEXT = 4000;

/** One turn of a conversation: the person's message(s) and the agent's answer, made safe. */
export interface ConversationTurn {
  taskId: string;
  /** What the person wrote (their text messages of the task, joined); empty when they sent only answers. */
  said: string;
  /** The agent's answer: its answer artifact, else its final status text; empty when it has none. */
  answer: string;
  state: TurnState;
}

/** What the last task of a session waits for, to be answered in place. */
export type Waiting =
  | { kind: 'approval'; task: Task; request: ApprovalRequest }
  | { kind: 'client-request'; task: Task; request: ClientRequest }
  /** A question in words (made safe): the next message answers it. */
  | { kind: 'question'; task: Task; question: string }
  /** A request this client cannot read: only canceling the task ends it. */
  | { kind: 'malformed'; task: Task };

/** `text` made safe and cut to MAX_TURN_TEXT characters, saying how much was left out. */
export function boundedText(text: string): string {
  const safe = safeText(text).trim();
  if (safe.length <= MAX_TURN_TEXT) return safe;
  // Never cut a UTF-16 pair in two.
  let end = MAX_TURN_TEXT;
  if (/[\uD800-\uDBFF]/.test(safe.charAt(end - 1))) end -= 1;
  return `${safe.slice(0, end)}… (${safe.length - end} more characters)`;
}

/** A stored task (a history item, JSON) as the SDK reads it; undefined for one that is no task. */
export function taskOfItem(item: unknown): Task | undefined {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) return undefined;
  if (typeof (item as { id?: unknown }).id !== 'string') return undefined;
  try {
    const task = Task.fromJSON(item);
    return typeof task.id === 'string' && task.id !== '' ? task : undefined;
  } catch {
    return undefined;
  }
}

/** A task as a conversation turn. */
export function turnOf(task: Task): ConversationTurn {
  const said = task.history
    .filter((message) => message.role === Role.ROLE_USER)
    .map((message) => textOfParts(message.parts))
    .filter((text) => text.trim() !== '')
    .join('\n');
  const artifact = task.artifacts.find((a) => a.name === ANSWER_ARTIFACT);
  const state = turnState(task.status?.state);
  const status = textOfParts(task.status?.message?.parts);
  const answer = artifact ? textOfParts(artifact.parts) : state === 'input-required' ? '' : status;
  return { taskId: task.id, said: boundedText(said), answer: boundedText(answer), state };
}

/** The history items (stored tasks, oldest first) as conversation turns; an item that is no task is left out. */
export function conversationTurns(items: readonly unknown[]): ConversationTurn[] {
  return items.flatMap((item) => {
    const task = taskOfItem(item);
    return task ? [turnOf(task)] : [];
  });
}

/**
 * The last `count` turns of those read, and how many earlier turns are not shown: `total` is how many the
 * session has (the history page's totalSize), of which `turns` are the newest read.
 */
export function lastTurns(
  turns: readonly ConversationTurn[],
  total: number,
  count = SHOWN_TURNS,
): { shown: ConversationTurn[]; earlier: number } {
  const shown = turns.slice(-Math.max(0, count));
  return { shown, earlier: Math.max(0, Math.max(total, turns.length) - shown.length) };
}

/** What the last of the history items waits for, when it waits (input-required); undefined otherwise. */
export function waitingOf(items: readonly unknown[]): Waiting | undefined {
  const task = taskOfItem(items.at(-1));
  if (!task || turnState(task.status?.state) !== 'input-required') return undefined;
  const parts = task.status?.message?.parts;
  const pending = pendingRequestOf(parts);
  if (pending && 'approval' in pending) return { kind: 'approval', task, request: pending.approval };
  if (pending && 'clientRequest' in pending) return { kind: 'client-request', task, request: pending.clientRequest };
  if (pending) return { kind: 'malformed', task };
  return { kind: 'question', task, question: boundedText(textOfParts(parts)) };
}

/** The plan the newest task that shows one shows last (decoded as a turn reads it), if any. */
export function planOf(items: readonly unknown[]): PlanDataView | undefined {
  for (const item of [...items].reverse()) {
    const task = taskOfItem(item);
    if (!task) continue;
    const events = new TurnEventReader().read({ payload: { $case: 'task', value: task } });
    const plan = events.findLast((event) => event.kind === 'plan');
    if (plan) return plan.plan;
  }
  return undefined;
}

/** One page of `session/history` (oldest first), as the reader is given it. */
export interface HistoryPage {
  items: readonly unknown[];
  nextPageToken: string;
  totalSize: number;
}

/** The largest history page a server gives. */
export const HISTORY_PAGE_SIZE = 100;
/** How many pages a resumed chat reads at most, looking for a session's newest tasks. */
export const MAX_HISTORY_PAGES = 50;

/**
 * The newest `keep` tasks of a session, oldest first, and how many it has: the history comes oldest first,
 * so its pages are read through (at most MAX_HISTORY_PAGES), keeping the last ones. `read` gets each page.
 */
export async function readNewestTasks(
  read: (pageToken: string | undefined) => Promise<HistoryPage>,
  keep = SHOWN_TURNS,
): Promise<{ items: unknown[]; total: number }> {
  let items: unknown[] = [];
  let total = 0;
  let token: string | undefined;
  for (let pages = 0; pages < MAX_HISTORY_PAGES; pages++) {
    const page = await read(token);
    const got: unknown[] = Array.isArray(page.items) ? (page.items as unknown[]) : [];
    items = [...items, ...got].slice(-Math.max(1, keep));
    total = Number.isFinite(page.totalSize) ? page.totalSize : items.length;
    if (!page.nextPageToken || page.nextPageToken === token) break;
    token = page.nextPageToken;
  }
  return { items, total };
}
