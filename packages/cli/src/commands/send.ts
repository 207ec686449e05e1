import { StreamResponse } from '@a2a-js/sdk';
import type { Command } from 'commander';
import type { CleverAgentsClient } from '@cleveragents/client/node';
import { runTurn, type ApprovalAnswer } from '@cleveragents/client';
import type { TurnEvent } from '@cleveragents/client';
import { ioFor, withClient, type GlobalOptions, type Io } from '../context.js';
import { CliError, EXIT, exitCodeForState } from '../exit-codes.js';
import { planChecklist, toolCallLine, toolResultLine, usageLine } from '../render.js';
import { safeLine } from '../safe-text.js';
import { isProgressNote, outcomeMessage } from '../outcome.js';
import { AnswerPrinter } from '../terminal.js';
import { localTools, type LocalTools, type ToolOptions } from '../tools.js';
import { SigintGuard } from '../sigint.js';
import { untilOutputCloses } from '../output.js';
import type { ApprovalRequest } from '@cleveragents/contract';

export { isProgressNote, outcomeMessage };

export interface SendOptions extends ToolOptions {
  session?: string;
  task?: string;
  actor?: string;
  profile?: string;
  approve: 'never' | 'plans' | 'all';
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').trim();
}

/**
 * How `--approve` answers a gate: `plans` passes plan gates only, `all` every gate; else unanswered. A
 * follow-up of a terminal this run made (`tools`) is part of a command the person allowed: approved.
 */
export function unattendedDecision(
  which: SendOptions['approve'],
  request: ApprovalRequest,
  tools?: Pick<LocalTools, 'isAllowedFollowUp'>,
): ApprovalAnswer | undefined {
  if (which === 'all' || tools?.isAllowedFollowUp(request)) return { decision: 'approve' };
  if (which === 'plans' && request.subject.kind === 'plan') return { decision: 'approve' };
  return undefined;
}

/** The session a new conversation runs in: the one named, one made for --actor/--profile, or the agent's choice. */
export async function sessionFor(
  client: CleverAgentsClient,
  options: { session?: string; actor?: string; profile?: string },
): Promise<string | undefined> {
  if (options.session) return options.session;
  if (!options.actor && !options.profile) return undefined;
  const created = await client.sessions.create({
    ...(options.actor ? { actor: options.actor } : {}),
    ...(options.profile ? { profile: options.profile } : {}),
  });
  return String((created as { sessionId: unknown }).sessionId);
}

/** Progress lines (plan, tools, notes) for a person: on stderr when it is a terminal. */
export function progressPrinter(io: Io, answer: AnswerPrinter): (event: TurnEvent) => void {
  const style = io.errStyle;
  const line = (text: string): void => {
    if (!io.err.isTTY) return;
    answer.interrupt();
    io.err.write(`${text}\n`);
  };
  return (event) => {
    switch (event.kind) {
      case 'text':
        answer.write(event.delta);
        return;
      case 'answer':
        answer.replace(event.text);
        return;
      case 'message':
        answer.write(event.text);
        return;
      case 'plan':
        line(planChecklist(event.plan, style));
        return;
      case 'tool-call':
        line(toolCallLine(event.call, style));
        return;
      case 'tool-result':
        line(toolResultLine(event.result, style));
        return;
      case 'status':
        if (isProgressNote(event.state, event.text)) line(style.dim(`${event.state}: ${safeLine(event.text)}`));
        return;
      case 'warning':
        // Said on a terminal or not (something the agent sent was not acted on); a piped answer is not cut for it.
        if (io.err.isTTY) answer.interrupt();
        io.err.write(`${style.yellow('warning:')} ${safeLine(event.text)}\n`);
        return;
      default:
        return;
    }
  };
}

export async function send(options: GlobalOptions, command: Command, words: string[]): Promise<number> {
  const opts = command.opts<SendOptions>();
  const io = ioFor(options);
  let text = words.join(' ');
  if (text === '-') text = await readStdin();
  if (!text && !opts.task) {
    throw new CliError('Nothing to send', EXIT.USAGE, 'give the message as arguments, or - to read stdin');
  }
  return withClient(options, io, async (client) => {
    const tools = await localTools(opts, io, { interactive: false });
    const sigint = new SigintGuard(io);
    try {
      const contextId = await sessionFor(client, opts);
      const answer = new AnswerPrinter(io.out, io.outStyle);
      const show = options.json ? () => undefined : progressPrinter(io, answer);
      const stream = (request: Parameters<CleverAgentsClient['stream']>[0]) =>
        printedAsNdjson(
          client.stream(request, { signal: untilOutputCloses(sigint.signal) }),
          io,
          options.json === true,
        );
      const outcome = await runTurn(
        stream,
        { text, contextId, taskId: opts.task, capabilities: tools?.capabilities, metadata: tools?.metadata },
        {
          onEvent: (event) => {
            if (event.kind === 'task') sigint.onCancel(() => client.tasks.cancel({ id: event.taskId }));
            show(event);
          },
          decide: (request) => Promise.resolve(unattendedDecision(opts.approve, request, tools)),
          runClientCalls: tools ? (request) => tools.run(request) : undefined,
        },
      );
      await answer.finish();
      const code = sigint.interrupted ? EXIT.INTERRUPTED : exitCodeForState(outcome.state, outcome.unanswered);
      const usage = client.offersExtensions && outcome.contextId ? await usageOf(client, outcome.contextId) : undefined;
      if (options.json) {
        io.out.write(`${JSON.stringify({ result: { ...outcome, ...(usage ?? {}), exitCode: code } })}\n`);
        return code;
      }
      if (usage && io.err.isTTY) io.err.write(`${usageLine(usage.usage, usage.budget, io.errStyle)}\n`);
      if (code !== EXIT.OK) io.err.write(`${outcomeMessage(outcome, io, options)}\n`);
      return code;
    } finally {
      sigint.dispose();
      await tools?.dispose();
    }
  });
}

/** The events as they pass, each printed as one NDJSON line on stdout when `json` (`--json`). */
export function printedAsNdjson(
  events: AsyncIterable<StreamResponse>,
  io: Io,
  json: boolean,
): AsyncIterable<StreamResponse> {
  if (!json) return events;
  return (async function* () {
    for await (const event of events) {
      io.out.write(`${JSON.stringify(eventJson(event))}\n`);
      yield event;
    }
  })();
}

/** A stream event as JSON (the A2A wire form, as the SDK encodes it). */
export function eventJson(event: StreamResponse): unknown {
  return StreamResponse.toJSON(event);
}

export async function usageOf(
  client: CleverAgentsClient,
  sessionId: string,
): Promise<
  { usage: { tokens?: number; toolCalls?: number; wallTimeMs?: number }; budget?: Record<string, number> } | undefined
> {
  try {
    const session = (await client.sessions.get({ sessionId })) as {
      usage?: { tokens?: number; toolCalls?: number; wallTimeMs?: number };
      budget?: Record<string, number> | null;
    };
    return session.usage ? { usage: session.usage, budget: session.budget ?? undefined } : undefined;
  } catch {
    return undefined;
  }
}
