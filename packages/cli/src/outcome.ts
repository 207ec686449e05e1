import { INTERRUPTED_STATES, TERMINAL_STATES, type TurnState } from '@cleveragents/client';
import { cliCommand, operand, type GlobalOptions, type Io, type Operand } from './context.js';
import { safeLine, safeText } from './safe-text.js';

/** How a turn's end is said to a person, by `send`, `tasks` and both chats. */

/**
 * Whether a status's text is a note to show as it comes: only while the task goes on. The text of a
 * state the turn ends in is its answer, its question or its reason, which the turn's end says once.
 */
export function isProgressNote(state: TurnState, text: string | undefined): text is string {
  return !!text && !TERMINAL_STATES.has(state) && !INTERRUPTED_STATES.has(state);
}

/**
 * One line saying how a turn that did not complete ended, and what to do next (a command, as this run
 * reached the server: `options`). The agent's text is made safe; a gate or a client request is said in
 * the client's words (its status text is addressed to programs: "Answer with a cleveragents/approval-response").
 */
export function outcomeMessage(
  outcome: { state: string; statusText?: string; unanswered?: string; taskId?: string },
  io: Io,
  options: GlobalOptions = {},
): string {
  const style = io.errStyle;
  const task = outcome.taskId ? ` (task ${safeLine(outcome.taskId)})` : '';
  const said = outcome.statusText === undefined ? undefined : safeText(outcome.statusText);
  // Each word is made safe first, so that quoting is decided on what is shown.
  const command = (...words: (string | Operand)[]): string =>
    `\`${cliCommand(
      words.map((w) => (typeof w === 'string' ? safeLine(w) : operand(safeLine(w.operand)))),
      options,
    )}\``;
  const taskId = outcome.taskId ? operand(outcome.taskId) : 'ID';
  if (outcome.unanswered === 'approval') {
    return `${style.yellow('waiting:')} the task waits for an approval${task}\n${style.yellow('hint:')} answer it in ${command('chat')}, or re-run with --approve plans|all`;
  }
  if (outcome.unanswered === 'malformed') {
    return `${style.yellow('waiting:')} the task waits on a request this client cannot read${task}\n${style.yellow('hint:')} end it with ${command('tasks', 'cancel', taskId)}`;
  }
  if (outcome.unanswered === 'client-request') {
    return `${style.yellow('waiting:')} the task waits for this client to run a tool${task}`;
  }
  if (outcome.unanswered === 'input' || outcome.state === 'input-required') {
    return `${style.yellow('waiting:')} the agent asks${task}: ${said ?? ''}\n${style.yellow('hint:')} answer with ${command('send', '--task', taskId, 'TEXT')}`;
  }
  return `${style.red(`${outcome.state}:`)} ${said ?? 'no reason given'}${task}`;
}
