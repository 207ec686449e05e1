import { Role, Task } from '@a2a-js/sdk';
import type { Command } from 'commander';
import { textOfParts, turnState } from '@cleveragents/client';
import { ioFor, withClient, type GlobalOptions } from '../context.js';
import { CliError, EXIT } from '../exit-codes.js';
import { writeRecord } from '../pages.js';
import { usageLine } from '../render.js';
import { safeData, safeLine, safeText } from '../safe-text.js';
import type { Style } from '../style.js';
import { fields, table } from '../table.js';

function limitOf(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) {
    throw new CliError(`--limit must be a positive whole number, not "${value}"`, EXIT.USAGE);
  }
  return n;
}

export async function list(options: GlobalOptions, command: Command): Promise<number> {
  const io = ioFor(options);
  const pageSize = limitOf(command.opts<{ limit: string }>().limit);
  return withClient(options, io, async (client) => {
    const page = await client.sessions.list({ pageSize });
    if (options.json) {
      io.out.write(`${JSON.stringify(page)}\n`);
      return EXIT.OK;
    }
    if (page.items.length === 0) {
      io.out.write('No sessions.\n');
      return EXIT.OK;
    }
    const rows = safeData(page.items).map((s) => [s.sessionId, s.status, s.actor, s.title ?? '', s.updatedAt]);
    io.out.write(`${table(['SESSION', 'STATUS', 'ACTOR', 'TITLE', 'UPDATED'], rows)}\n`);
    return EXIT.OK;
  });
}

export async function show(options: GlobalOptions, _command: Command, sessionId: string): Promise<number> {
  const io = ioFor(options);
  return withClient(options, io, async (client) => {
    return writeRecord(io, options, await client.sessions.get({ sessionId }), (s) =>
      fields([
        ['session', s.sessionId],
        ['status', s.status],
        ['actor', s.actor],
        ['profile', s.profile ?? '—'],
        ['title', s.title ?? '—'],
        ['namespace', s.namespace],
        ['usage', usageLine(s.usage, s.budget, io.outStyle)],
        ['created', s.createdAt],
        ['updated', s.updatedAt],
      ]),
    );
  });
}

/** Renames a session (`sessions rename ID TITLE`); an empty title is refused by the server, naming it. */
export async function rename(
  options: GlobalOptions,
  _command: Command,
  sessionId: string,
  title: string,
): Promise<number> {
  const io = ioFor(options);
  return withClient(options, io, async (client) => {
    const session = await client.sessions.update({ sessionId, title });
    if (options.json) {
      io.out.write(`${JSON.stringify(session)}\n`);
      return EXIT.OK;
    }
    io.out.write(`Session ${safeLine(session.sessionId)} is now titled ${JSON.stringify(safeLine(session.title))}.\n`);
    return EXIT.OK;
  });
}

/** A session's conversation: each task's messages, then its answer, oldest first. */
export async function history(options: GlobalOptions, command: Command, sessionId: string): Promise<number> {
  const io = ioFor(options);
  const pageSize = limitOf(command.opts<{ limit: string }>().limit);
  return withClient(options, io, async (client) => {
    const page = await client.sessions.history({ sessionId, pageSize });
    if (options.json) {
      io.out.write(`${JSON.stringify(page)}\n`);
      return EXIT.OK;
    }
    if (page.items.length === 0) io.out.write('No messages yet.\n');
    // Each item is a stored A2A Task in its JSON form: read it as the SDK does.
    for (const task of page.items.map((item) => Task.fromJSON(item))) io.out.write(conversationOf(task, io.outStyle));
    if (page.nextPageToken) io.out.write(`${io.outStyle.dim('(more: raise --limit)')}\n`);
    return EXIT.OK;
  });
}

/** A task's messages, then its answer, as `sessions history` prints them (the text made safe). */
export function conversationOf(task: Task, style: Style): string {
  let text = '';
  for (const message of task.history) {
    const said = safeText(textOfParts(message.parts));
    if (!said) continue;
    const who = message.role === Role.ROLE_USER ? style.cyan('you') : style.magenta('agent');
    text += `${who}: ${said}\n`;
  }
  const answer = task.artifacts.find((a) => a.name === 'answer');
  const state = turnState(task.status?.state);
  if (answer) text += `${style.magenta('agent')}: ${safeText(textOfParts(answer.parts))}\n`;
  else if (state !== 'completed') {
    text += `${style.dim(`(task ${safeLine(task.id)} ${state})`)}\n`;
  }
  return text;
}
