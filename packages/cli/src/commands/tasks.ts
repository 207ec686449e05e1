import { Role, Task } from '@a2a-js/sdk';
import type { Command } from 'commander';
import {
  INTERRUPTED_STATES,
  TERMINAL_STATES,
  TurnEventReader,
  pendingRequestOf,
  turnState,
} from '@cleveragents/client';
import { ioFor, withClient, type GlobalOptions } from '../context.js';
import { CliError, EXIT, exitCodeForState } from '../exit-codes.js';
import { safeLine, safeText } from '../safe-text.js';
import { AnswerPrinter } from '../terminal.js';
import { untilOutputCloses } from '../output.js';
import { fields, table } from '../table.js';
import { eventJson, outcomeMessage, progressPrinter } from './send.js';
import { textOfParts } from '@cleveragents/client';

function positive(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new CliError(`${flag} must be a whole number, not "${value}"`, EXIT.USAGE);
  return n;
}

function json(value: unknown): string {
  return JSON.stringify(value);
}

export async function list(options: GlobalOptions, command: Command): Promise<number> {
  const opts = command.opts<{ session?: string; limit: string }>();
  const io = ioFor(options);
  const pageSize = positive(opts.limit, '--limit');
  return withClient(options, io, async (client) => {
    const result = await client.tasks.list({ ...(opts.session ? { contextId: opts.session } : {}), pageSize });
    if (options.json) {
      io.out.write(`${JSON.stringify(result.tasks.map((t) => Task.toJSON(t)))}\n`);
      return EXIT.OK;
    }
    if (result.tasks.length === 0) {
      io.out.write('No tasks.\n');
      return EXIT.OK;
    }
    const rows = result.tasks.map((t) => [
      safeLine(t.id),
      turnState(t.status?.state),
      safeLine(t.contextId),
      t.status?.timestamp ? new Date(String(t.status.timestamp)).toISOString() : '',
    ]);
    io.out.write(`${table(['TASK', 'STATE', 'SESSION', 'UPDATED'], rows)}\n`);
    return EXIT.OK;
  });
}

export async function get(options: GlobalOptions, command: Command, taskId: string): Promise<number> {
  const opts = command.opts<{ history: string }>();
  const io = ioFor(options);
  const historyLength = positive(opts.history, '--history');
  return withClient(options, io, async (client) => {
    const task = await client.tasks.get({ id: taskId, historyLength });
    if (options.json) {
      io.out.write(`${json(Task.toJSON(task))}\n`);
      return EXIT.OK;
    }
    io.out.write(describeTask(task));
    return EXIT.OK;
  });
}

/** A task for a person: its ids and state, then its answer and history (the agent's text made safe). */
export function describeTask(task: Task): string {
  const answer = task.artifacts.find((a) => a.name === 'answer');
  const entries: [string, string][] = [
    ['task', safeLine(task.id)],
    ['session', safeLine(task.contextId)],
    ['state', turnState(task.status?.state)],
  ];
  const status = textOfParts(task.status?.message?.parts);
  if (status && !answer) entries.push(['status', safeLine(status)]);
  entries.push(['artifacts', String(task.artifacts.length)]);
  let text = `${fields(entries)}\n`;
  if (answer) text += `\n${safeText(textOfParts(answer.parts))}\n`;
  for (const message of task.history) {
    text += `\n${message.role === Role.ROLE_USER ? 'user' : 'agent'}: ${safeText(textOfParts(message.parts))}\n`;
  }
  return text;
}

export async function cancel(options: GlobalOptions, _command: Command, taskId: string): Promise<number> {
  const io = ioFor(options);
  return withClient(options, io, async (client) => {
    const task = await client.tasks.cancel({ id: taskId });
    const state = turnState(task.status?.state);
    if (options.json) io.out.write(`${json(Task.toJSON(task))}\n`);
    else io.out.write(`${safeLine(task.id)} ${state}\n`);
    return EXIT.OK;
  });
}

/**
 * Follows a task (SubscribeToTask) until it ends or waits, re-joining a dropped stream as `send` does;
 * a task that already rests is shown as it stands. The exit code says how it stands.
 */
export async function watch(options: GlobalOptions, _command: Command, taskId: string): Promise<number> {
  const io = ioFor(options);
  return withClient(options, io, async (client) => {
    const reader = new TurnEventReader();
    const answer = new AnswerPrinter(io.out, io.outStyle);
    const show = progressPrinter(io, answer);
    for await (const event of client.tasks.follow({ id: taskId }, { signal: untilOutputCloses() })) {
      if (options.json) io.out.write(`${json(eventJson(event))}\n`);
      for (const e of reader.read(event)) if (!options.json) show(e);
      // The subscription stays open while the task waits: a waiting task is where watching ends.
      if (TERMINAL_STATES.has(reader.state) || INTERRUPTED_STATES.has(reader.state)) break;
    }
    await answer.finish();
    const code = exitCodeForState(reader.state);
    if (!options.json && code !== EXIT.OK) {
      const pending = reader.state === 'input-required' ? pendingRequestOf(reader.statusParts) : undefined;
      const unanswered = !pending
        ? undefined
        : 'approval' in pending
          ? 'approval'
          : 'clientRequest' in pending
            ? 'client-request'
            : 'malformed';
      const statusText = textOfParts(reader.statusParts) || undefined;
      io.err.write(`${outcomeMessage({ state: reader.state, taskId, statusText, unanswered }, io, options)}\n`);
    }
    return code;
  });
}
