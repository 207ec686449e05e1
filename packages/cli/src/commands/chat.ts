import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { createInterface, type Interface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Task } from '@a2a-js/sdk';
import type { SessionView } from '@cleveragents/contract';
import type { CleverAgentsClient } from '@cleveragents/client/node';
import { runTurn, type TurnOutcome } from '@cleveragents/client';
import type { TurnEvent } from '@cleveragents/client';
import { connectFor, describeError, ioFor, type GlobalOptions, type Io } from '../context.js';
import { CliError, EXIT } from '../exit-codes.js';
import { askApproval } from '../prompts.js';
import { planChecklist, toolCallLine, toolResultLine, usageLine } from '../render.js';
import { safeLine, safeText } from '../safe-text.js';
import { readPipedLine } from '../piped-line.js';
import { SigintGuard, type SignalSource } from '../sigint.js';
import { AnswerPrinter, Wait } from '../terminal.js';
import { EarlyKeys, TypeAhead } from '../type-ahead.js';
import { localTools, type LocalTools, type ToolOptions } from '../tools.js';
import { isProgressNote, outcomeMessage } from '../outcome.js';
import { sessionFor, usageOf } from './send.js';
import { ChatSessions } from '../chat-sessions.js';
import { chatCommand, type ChatCommandsHost } from '../chat-commands.js';
import { takeUp, type ChatConversation } from '../conversation-so-far.js';

interface ChatOptions extends ToolOptions {
  session?: string;
  actor?: string;
  profile?: string;
  /** `--plain`: the line-mode chat even on a terminal. */
  plain?: boolean;
}

/**
 * Whether the chat runs its interactive UI: a person at a terminal (keys, the screen, and the answer's
 * stream all on it) that can draw it, and no `--plain`. A redirected answer keeps the line-mode chat.
 */
export function wantsInteractiveUi(plain: boolean | undefined, io: Io, input: NodeJS.ReadStream): boolean {
  return (
    plain !== true && io.env.TERM !== 'dumb' && input.isTTY === true && io.err.isTTY === true && io.out.isTTY === true
  );
}

/** A Ctrl-C at the prompt this soon after one that canceled a turn counts as its second press. */
const SECOND_PRESS_MS = 2000;

const HELP = [
  '/plan     the plan as it stands',
  '/cancel   cancel the task waiting for you',
  '/session  this session: id, actor, profile, usage',
  '/sessions your sessions; /sessions N or /sessions ID goes to one',
  '/title T  give this session the title T',
  '/usage    what this session used, against its budget',
  '/help     this list',
  '/quit     leave (Ctrl-D does too)',
].join('\n');

/** The chat's edges on this machine: the keyboard, where Ctrl-C arrives as SIGINT, the clock. */
export interface ChatTerminal {
  input: NodeJS.ReadStream;
  signals: SignalSource;
  now(): number;
}

function processTerminal(): ChatTerminal {
  return { input: process.stdin, signals: process, now: () => Date.now() };
}

/** One interactive conversation: a prompt, the turn streamed with its plan, tools and gates, again. */
export class Chat {
  /** The session, its plan and what waits: kept with the slash commands both chats share (chat-commands.ts). */
  private readonly conversation: ChatConversation = {};
  private lines?: Interface;
  /** When Ctrl-C last canceled a turn: a Ctrl-C at the prompt right after it is the second press. */
  private canceledAt = 0;
  private history: string[] = [];
  /** `/sessions` and `/title`. */
  private readonly switcher: ChatSessions;

  constructor(
    private readonly client: CleverAgentsClient,
    private readonly io: Io,
    private readonly tools: LocalTools | undefined,
    contextId: string | undefined,
    /** Keys typed while a turn runs, kept for the next prompt. */
    private readonly typeAhead: TypeAhead,
    /** How this run connected: a task left running is picked up the same way. */
    private readonly options: GlobalOptions = {},
    private readonly terminal: ChatTerminal = processTerminal(),
  ) {
    this.conversation.contextId = contextId;
    this.switcher = new ChatSessions({
      client,
      say: (text) => this.say(text),
      style: this.style,
      options: this.options,
    });
  }

  private get style() {
    return this.io.errStyle;
  }

  /** What the shared slash commands use of this chat. */
  private get commandHost(): ChatCommandsHost {
    return {
      client: this.client,
      say: (text) => this.say(text),
      style: this.style,
      options: this.options,
      conversation: this.conversation,
      help: HELP,
      switcher: this.switcher,
      takeUp: () => this.resume(),
    };
  }

  private say(text: string): void {
    this.io.err.write(`${text}\n`);
  }

  async banner(): Promise<void> {
    const where =
      this.client.transport === 'stdio' ? 'local server' : (this.client.card.supportedInterfaces[0]?.url ?? '');
    this.say(`${this.style.bold(safeLine(this.client.card.name))} ${this.style.dim(`· ${safeLine(where)}`)}`);
    if (this.conversation.contextId) {
      const session = this.client.offersExtensions ? await this.session().catch(() => undefined) : undefined;
      this.say(
        this.style.dim(
          `session ${safeLine(this.conversation.contextId)}${session ? ` · actor ${safeLine(session.actor)} · profile ${safeLine(session.profile ?? 'default')}` : ''}`,
        ),
      );
    }
    if (this.tools) {
      this.say(this.style.dim(`workspace ${this.tools.workspace} · commands ${this.tools.commands}`));
    }
    if (!this.client.offersExtensions) {
      this.say(this.style.dim('This agent offers plain A2A: no sessions, plans or usage commands.'));
    }
    this.say(this.style.dim('Type a message. /help for commands; Ctrl-C cancels a running task; Ctrl-D leaves.'));
  }

  private session(): Promise<SessionView> {
    return this.client.sessions.get({ sessionId: this.conversation.contextId! });
  }

  /** Reads one line at the prompt; undefined when the user leaves with Ctrl-D, null with Ctrl-C twice. */
  private read(): Promise<string | undefined | null> {
    const input = this.terminal.input;
    // Ctrl-D typed ahead, while a turn was still printing, ended stdin before this prompt.
    if (input.readableEnded) return Promise.resolve(undefined);
    // A pipe has no keys to edit: a line at a time, the rest left in it for the prompts after.
    if (input.isTTY !== true) {
      this.io.err.write(this.style.cyan('› '));
      return readPipedLine(input);
    }
    // Keys typed while the last turn ran come first, a line at a time.
    this.typeAhead.feedLine();
    return new Promise((resolve) => {
      const lines = createInterface({
        input,
        output: this.io.err,
        terminal: true,
        history: this.history,
        historySize: 200,
        removeHistoryDuplicates: true,
      });
      this.lines = lines;
      let answered = false;
      let interrupts = 0;
      const onEnd = (): void => done(undefined);
      const done = (value: string | undefined | null): void => {
        if (answered) return;
        answered = true;
        input.off('end', onEnd);
        if (typeof value === 'string') this.keepRestOfPaste(input);
        lines.close();
        this.lines = undefined;
        resolve(value);
      };
      lines.on('SIGINT', () => {
        interrupts += 1;
        // The second press leaves, counting one that just canceled a turn (the cancel may beat the second).
        if (interrupts >= 2 || this.terminal.now() - this.canceledAt < SECOND_PRESS_MS) return done(null);
        lines.write(null, { ctrl: true, name: 'u' });
        this.io.err.write(`\n${this.style.dim('(Ctrl-C again or /quit to leave)')}\n`);
        lines.prompt();
      });
      lines.on('close', () => done(undefined));
      input.once('end', onEnd);
      lines.setPrompt(this.style.cyan('› '));
      lines.prompt();
      lines.once('line', (line) => done(line));
    });
  }

  /**
   * Keys that came with the Enter of a line just read (the rest of a paste), which the prompt, closed,
   * would drop: kept for the prompts after it, a line each, as keys typed during a turn are.
   */
  private keepRestOfPaste(input: NodeJS.ReadStream): void {
    const keep = (s: string | undefined, key?: { sequence?: string }): void =>
      this.typeAhead.keep(key?.sequence ?? s ?? '');
    input.on('keypress', keep);
    // The keys of one chunk are emitted at once: its rest has come before a microtask runs.
    queueMicrotask(() => input.off('keypress', keep));
  }

  async loop(): Promise<number> {
    await this.banner();
    // A resumed session: the conversation so far, and what its last task waits for, answered here.
    if (this.conversation.contextId && this.client.offersExtensions) {
      const code = await this.resume();
      if (code !== undefined) return code;
    }
    for (;;) {
      const line = await this.read();
      if (line === undefined) return EXIT.OK;
      if (line === null) return EXIT.INTERRUPTED;
      const text = line.trim();
      if (text === '') continue;
      if (text.startsWith('/')) {
        const code = await chatCommand(text, this.commandHost);
        if (code !== undefined) return code;
        continue;
      }
      const code = await this.guarded(text);
      if (code !== undefined) return code;
    }
  }

  /** One turn under its Ctrl-C guard (`waiting`: answer that task's request in place); a code when the chat ends. */
  private async guarded(text: string, waiting?: Task): Promise<number | undefined> {
    const sigint = new SigintGuard(this.io, this.terminal.signals);
    try {
      const outcome = await this.turn(text, sigint, waiting);
      if (sigint.interrupted) return EXIT.INTERRUPTED;
      await this.after(outcome);
    } catch (err) {
      if (sigint.interrupted) return EXIT.INTERRUPTED;
      this.say(describeError(err, this.style, this.options));
    } finally {
      if (sigint.pressed > 0) this.canceledAt = this.terminal.now();
      sigint.dispose();
    }
    return undefined;
  }

  /**
   * Shows the session's last turns (how many earlier ones are not shown), takes up its plan, and answers in
   * place what its last task waits for: an approval is asked, a client request runs through the local
   * tools, a question is said and the next message answers it. A code when the chat ends.
   */
  private resume(): Promise<number | undefined> {
    const toolsOn = this.tools !== undefined;
    return takeUp(
      this.commandHost,
      this.conversation,
      toolsOn,
      (text) => this.say(text),
      (task) => this.guarded('', task),
    );
  }

  private async turn(text: string, sigint: SigintGuard, waiting?: Task): Promise<TurnOutcome> {
    const answer = new AnswerPrinter(this.io.out, this.io.outStyle);
    const wait = new Wait(this.io.err, this.style);
    const print = (line: string): void => {
      wait.stop();
      answer.interrupt();
      this.say(line);
    };
    const onEvent = (event: TurnEvent): void => {
      switch (event.kind) {
        case 'task':
          this.conversation.contextId = event.contextId;
          sigint.onCancel(() => this.client.tasks.cancel({ id: event.taskId }));
          return;
        case 'text':
          wait.stop();
          answer.write(event.delta);
          return;
        case 'answer':
          wait.stop();
          answer.replace(event.text);
          return;
        case 'message':
          wait.stop();
          answer.write(event.text);
          if (event.contextId) this.conversation.contextId = event.contextId;
          return;
        case 'plan':
          this.conversation.plan = event.plan;
          print(planChecklist(event.plan, this.style));
          wait.start('Working');
          return;
        case 'tool-call':
          print(toolCallLine(event.call, this.style));
          wait.start(`Running ${event.call.name}`);
          return;
        case 'tool-result':
          print(toolResultLine(event.result, this.style));
          wait.start('Working');
          return;
        case 'warning':
          print(`${this.style.yellow('warning:')} ${safeLine(event.text)}`);
          return;
        case 'status':
          if (event.state === 'working' && !event.text) wait.start('Working');
          else if (isProgressNote(event.state, event.text)) {
            print(this.style.dim(`${event.state}: ${safeLine(event.text)}`));
          }
          return;
        default:
          return;
      }
    };
    const taskId = this.conversation.answersTask;
    this.conversation.answersTask = undefined;
    this.conversation.waitingTaskId = undefined;
    // Until the prompt is back, keys are kept for it; Ctrl-C among them cancels, as the signal does.
    const listen = (): void => this.typeAhead.listen(() => sigint.press());
    /** A question takes the keyboard: keys typed before it showed do not answer it, nor go to the prompt. */
    const ask = async <T>(question: () => Promise<T>): Promise<T> => {
      this.typeAhead.pause();
      this.typeAhead.drop();
      try {
        return await question();
      } finally {
        listen();
      }
    };
    listen();
    wait.start('Thinking');
    try {
      return await runTurn(
        (request) => this.client.stream(request, { signal: sigint.signal }),
        {
          text,
          contextId: this.conversation.contextId,
          taskId,
          waiting,
          capabilities: this.tools?.capabilities,
          metadata: this.tools?.metadata,
        },
        {
          onEvent,
          decide: async (request) => {
            // A follow-up of a terminal the person allowed is part of that command: not asked again.
            if (this.tools?.isAllowedFollowUp(request)) return { decision: 'approve' };
            wait.stop();
            answer.interrupt();
            const preview = await this.tools?.gatePreview(request);
            const decision = await ask(() => askApproval(request, this.io, preview, this.terminal.input));
            if (decision.decision !== 'reject' && request.subject.kind === 'tool') {
              // Approved at the gate: the client does not ask again when the call arrives.
              const args = decision.decision === 'edit' ? decision.edited : request.subject.args;
              this.tools?.preApprove(request.subject.tool, args as Record<string, unknown>);
            }
            wait.start('Working');
            return decision;
          },
          runClientCalls: this.tools
            ? async (request) => {
                wait.stop();
                answer.interrupt();
                // A call may ask (a write's diff, a command): the keyboard is the question's meanwhile.
                const results = await this.tools!.run(request, ask);
                wait.start('Working');
                return results;
              }
            : undefined,
        },
      );
    } finally {
      this.tools?.endTurn();
      this.typeAhead.stop();
      wait.stop();
      await answer.finish();
    }
  }

  private async after(outcome: TurnOutcome): Promise<void> {
    if (outcome.unanswered === 'malformed') {
      // The warning said what was wrong: nothing here can answer it.
      this.conversation.waitingTaskId = outcome.taskId;
      this.say(this.style.yellow('The task waits on a request this client cannot read: /cancel ends it.'));
    } else if (outcome.unanswered === 'approval' || outcome.unanswered === 'client-request') {
      // Its status text is addressed to programs ("Answer with a cleveragents/…"): said in words here.
      this.conversation.waitingTaskId = outcome.taskId;
      this.say(
        this.style.yellow(`The task waits for ${outcome.unanswered === 'approval' ? 'an approval' : 'this client'}.`),
      );
    } else if (outcome.state === 'input-required' || outcome.unanswered) {
      this.conversation.waitingTaskId = outcome.taskId;
      this.conversation.answersTask = outcome.taskId;
      this.say(
        outcome.statusText
          ? this.style.yellow(safeText(outcome.statusText))
          : this.style.yellow('The agent waits for your answer.'),
      );
    } else if (outcome.state !== 'completed') {
      this.say(outcomeMessage(outcome, this.io, this.options));
    }
    if (this.client.offersExtensions && outcome.contextId) {
      const usage = await usageOf(this.client, outcome.contextId);
      if (usage) this.say(usageLine(usage.usage, usage.budget, this.style));
    }
  }

  close(): void {
    this.lines?.close();
    this.typeAhead.restore();
  }
}

/**
 * The interactive UI: the bundle the build makes of it (scripts/bundle-ui.mjs), or its modules where
 * there is none (the sources, run by the tests in process).
 */
function loadInteractiveUi(): Promise<typeof import('../ui/app.js')> {
  const bundle = new URL('../ui/bundle/app.js', import.meta.url);
  return existsSync(fileURLToPath(bundle))
    ? (import(bundle.href) as Promise<typeof import('../ui/app.js')>)
    : import('../ui/app.js');
}

export async function chat(options: GlobalOptions, command: Command): Promise<number> {
  const opts = command.opts<ChatOptions>();
  const io = ioFor(options);
  if (options.json) {
    throw new CliError('chat is interactive and has no --json output', EXIT.USAGE, 'use `cleveragents send --json`');
  }
  const interactive = wantsInteractiveUi(opts.plain, io, process.stdin);
  // Keys typed before the UI is up are held for it (EarlyKeys).
  const early = interactive ? new EarlyKeys(process.stdin).hold() : undefined;
  // The interactive UI (ink, React, the Markdown renderer) loads while the connection is made; for this path
  // only. A failure to load is met where the UI is started.
  const ui = interactive ? loadInteractiveUi() : undefined;
  ui?.catch(() => undefined);
  let client: CleverAgentsClient;
  try {
    client = await connectFor(options, io);
  } catch (err) {
    early?.release();
    throw err;
  }
  let tools: LocalTools | undefined;
  let session: Chat | undefined;
  try {
    if (!client.offersExtensions && (opts.actor || opts.profile)) {
      throw new CliError(
        '--actor and --profile need a CleverAgents server: this agent does not offer sessions',
        EXIT.NOT_OFFERED,
      );
    }
    if (opts.session && client.offersExtensions) {
      // Resuming: a session that is not there (or not the caller's) is said now, not at the first message.
      await client.sessions.get({ sessionId: opts.session });
    }
    tools = await localTools(opts, io, { interactive: true });
    const contextId = await sessionFor(client, opts);
    if (ui) {
      const { runInteractiveChat } = await ui;
      early?.handOver();
      return await runInteractiveChat({
        client,
        io,
        tools,
        contextId,
        options,
        input: process.stdin,
        signals: process,
      });
    }
    session = new Chat(client, io, tools, contextId, new TypeAhead(process.stdin), options);
    return await session.loop();
  } finally {
    early?.release();
    session?.close();
    await tools?.dispose();
    await client.close();
  }
}
