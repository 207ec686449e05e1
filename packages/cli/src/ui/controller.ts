import type { Task } from '@a2a-js/sdk';
import type { ApprovalRequest, SessionView } from '@cleveragents/contract';
import type { CleverAgentsClient } from '@cleveragents/client/node';
import { runTurn, type ApprovalAnswer, type TurnEvent, type TurnOutcome } from '@cleveragents/client';
import { MAX_APPROVAL_REASON_LENGTH } from '@cleveragents/contract';
import { describeError, type GlobalOptions, type Io } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { editGate, editorCommand } from '../prompts.js';
import { rowsOf } from '../terminal.js';
import { safeLine, safeText } from '../safe-text.js';
import type { LocalTools, ToolAsker } from '../tools.js';
import { isProgressNote, outcomeMessage } from '../outcome.js';
import { SessionAllowances } from './allowances.js';
import type { DialogAnswer } from './dialog.js';
import { gateDialog, toolDialog, type DialogSpec } from './questions.js';
import type { StatusInfo } from './status-line.js';
import { Transcript } from './transcript.js';
import { ChatSessions } from '../chat-sessions.js';
import { chatCommand, type ChatCommandsHost } from '../chat-commands.js';
import { takeUp, type ChatConversation } from '../conversation-so-far.js';
import { subjectOf, questionSubject, hostOf } from './subjects.js';

/**
 * The interactive chat's conduct, apart from how it is drawn: turns run with `runTurn` as the line-mode
 * chat runs them, questions put as dialogs, slash commands, Ctrl-C, and what the status line shows. The
 * ink app draws its view and hands it the person's keys.
 */

/** A Ctrl-C at the prompt this soon after one that canceled a turn counts as its second press. */
const SECOND_PRESS_MS = 2000;
/** How often the status line's count of approvals waiting in other sessions is refreshed. */
export const APPROVALS_EVERY_MS = 15_000;

/** The slash commands, for /help and Tab completion. */
export const COMMANDS = [
  { name: '/plan', help: 'the plan as it stands' },
  { name: '/cancel', help: 'cancel the task waiting for you' },
  { name: '/session', help: 'this session: id, actor, profile, usage' },
  { name: '/sessions', help: 'your sessions; /sessions N or ID goes to one' },
  { name: '/title', help: 'renames this session: /title TEXT' },
  { name: '/usage', help: 'what this session used, against its budget' },
  { name: '/help', help: 'this list' },
  { name: '/quit', help: 'leave (Ctrl-D does too)' },
] as const;

export const HELP = [
  ...COMMANDS.map((c) => `${c.name.padEnd(9)}${c.help}`),
  'Keys: Ctrl-C cancels a running task (twice leaves) · Ctrl-O shows tools’ output in full, or trimmed · Tab completes',
].join('\n');

/** A dialog waiting for the person's answer. */
export interface Asking {
  id: number;
  spec: DialogSpec;
  /** Edit: the editor runs; resolves with why the edit was not used, or undefined once it answered. */
  onEdit?: () => Promise<string | undefined>;
  answer: (answer: DialogAnswer) => void;
  /** The turn was canceled: the question is left unanswered. */
  dismiss: () => void;
}

export interface ChatView {
  /** At the prompt, in a turn, or ended. */
  phase: 'prompt' | 'turn' | 'done';
  /** What is awaited (the spinner's text), in a turn. */
  waiting?: string;
  asking?: Asking;
  /** Messages sent while a turn ran, to send when it ends. */
  queued: string[];
  status: StatusInfo;
}

export interface ChatSetup {
  client: CleverAgentsClient;
  io: Io;
  tools?: LocalTools;
  contextId?: string;
  /** How this run connected, for the commands it suggests. */
  options: GlobalOptions;
  transcript: Transcript;
  now?: () => number;
  /** What a turn waits for before it starts (the Markdown renderer, loading after the first frame). */
  ready?: Promise<unknown>;
}

type Answered = (DialogAnswer & { edited?: unknown }) | undefined;

/** What the first Ctrl-C of a turn cancels, and what the second aborts. */
class TurnStop {
  readonly controller = new AbortController();
  presses = 0;
  cancel?: () => Promise<unknown>;
}

export class ChatController {
  /** The session, its plan and what waits: kept with the slash commands both chats share (chat-commands.ts). */
  private readonly conversation: ChatConversation = {};
  private stop?: TurnStop;
  private canceledAt = 0;
  private promptInterrupts = 0;
  private nextDialog = 0;
  readonly allowances = new SessionAllowances();
  private snapshot: ChatView;
  private readonly listeners = new Set<() => void>();
  private finish!: (code: number) => void;
  private approvalsTimer?: NodeJS.Timeout;
  private readonly ready?: Promise<unknown>;
  /** The exit code the chat ends with. */
  readonly done = new Promise<number>((resolve) => (this.finish = resolve));
  private readonly client: CleverAgentsClient;
  private readonly io: Io;
  private readonly tools?: LocalTools;
  private readonly options: GlobalOptions;
  readonly transcript: Transcript;
  private readonly now: () => number;
  /** `/sessions` and `/title`. */
  private readonly switcher: ChatSessions;

  constructor(setup: ChatSetup) {
    this.client = setup.client;
    this.io = setup.io;
    this.tools = setup.tools;
    this.options = setup.options;
    this.transcript = setup.transcript;
    this.conversation.contextId = setup.contextId;
    this.now = setup.now ?? Date.now;
    this.ready = setup.ready;
    this.switcher = new ChatSessions(this.host);
    this.snapshot = {
      phase: 'prompt',
      queued: [],
      status: {
        where: this.client.transport === 'stdio' ? 'local' : hostOf(this.client.card.supportedInterfaces[0]?.url),
        session: this.conversation.contextId,
        workspace: this.tools?.workspace,
        sandboxed: this.tools?.sandboxed,
        allowed: [],
      },
    };
  }

  private get style() {
    return this.io.errStyle;
  }

  /** What the shared slash commands use of this chat. */
  private get commandHost(): ChatCommandsHost {
    return {
      ...this.host,
      conversation: this.conversation,
      help: HELP,
      switcher: this.switcher,
      takeUp: async () => {
        await this.refreshSession();
        return this.resume();
      },
    };
  }

  /** What the session commands and the conversation so far use of the chat. */
  private get host() {
    return { client: this.client, say: (text: string) => this.say(text), style: this.style, options: this.options };
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  view = (): ChatView => this.snapshot;

  private set(change: Partial<ChatView>): void {
    this.snapshot = { ...this.snapshot, ...change };
    for (const listener of this.listeners) listener();
  }

  private setStatus(change: Partial<StatusInfo>): void {
    this.set({ status: { ...this.snapshot.status, ...change } });
  }

  private say(text: string): void {
    this.transcript.say(text);
  }

  private exit(code: number): void {
    this.set({ phase: 'done', asking: undefined });
    this.finish(code);
  }

  /** The banner: where this chat is, the session, the workspace, the keys. */
  async start(): Promise<void> {
    const where =
      this.client.transport === 'stdio' ? 'local server' : (this.client.card.supportedInterfaces[0]?.url ?? '');
    this.say(`${this.style.bold(safeLine(this.client.card.name))} ${this.style.dim(`· ${safeLine(where)}`)}`);
    if (this.tools) {
      this.say(this.style.dim(`workspace ${this.tools.workspace} · commands ${this.tools.commands}`));
    }
    if (!this.client.offersExtensions) {
      this.say(this.style.dim('This agent offers plain A2A: no sessions, plans or usage commands.'));
    }
    this.say(
      this.style.dim(
        'Type a message. /help for commands; Ctrl-C cancels a running task; Ctrl-O tool output; Ctrl-D leaves.',
      ),
    );
    await this.refreshSession();
    this.watchApprovals();
    // A resumed session: the conversation so far, and what its last task waits for, answered here.
    if (this.conversation.contextId && this.client.offersExtensions) await this.act(() => this.resume());
  }

  /**
   * Shows the session's last turns, takes up its plan, and answers in place what its last task waits for: an
   * approval is asked, a client request runs through the local tools, a question is said and the next
   * message answers it. A code when the chat ends.
   */
  private resume(): Promise<number | undefined> {
    const toolsOn = this.tools !== undefined;
    return takeUp(
      this.commandHost,
      this.conversation,
      toolsOn,
      (text) => this.transcript.notice(text),
      (task) => this.turn('', task),
    );
  }

  private async refreshSession(): Promise<void> {
    if (!this.conversation.contextId || !this.client.offersExtensions) return;
    const session = await this.session().catch(() => undefined);
    if (!session) return;
    this.setStatus({
      session: session.sessionId,
      actor: session.actor,
      profile: session.profile ?? 'default',
      usage: session.usage,
      budget: session.budget ?? undefined,
    });
  }

  /**
   * Counts the person's approvals waiting in their other sessions, for the status line: now, after each turn,
   * and every APPROVALS_EVERY_MS while the chat runs. A server without approvals (or one that fails to say)
   * leaves the count as it was; what it answers is only counted, never shown.
   */
  private watchApprovals(): void {
    if (!this.client.offersExtensions || this.approvalsTimer) return;
    void this.refreshApprovals();
    this.approvalsTimer = setInterval(() => void this.refreshApprovals(), APPROVALS_EVERY_MS);
    this.approvalsTimer.unref();
    void this.done.then(() => clearInterval(this.approvalsTimer));
  }

  private async refreshApprovals(): Promise<void> {
    if (!this.client.offersExtensions || this.snapshot.phase === 'done') return;
    // What a server answers is not checked against the contract on its way in: read as unknown.
    const page: unknown = await this.client.approvals.list({ state: 'pending', pageSize: 100 }).catch(() => undefined);
    if (!isRecord(page) || !Array.isArray(page.items) || !Number.isSafeInteger(page.totalSize)) return;
    const items: unknown[] = page.items;
    const here = items.filter((a) => isRecord(a) && a.sessionId === this.conversation.contextId).length;
    this.setStatus({ waitingElsewhere: Math.max(0, (page.totalSize as number) - here) });
  }

  private session(): Promise<SessionView> {
    return this.client.sessions.get({ sessionId: this.conversation.contextId! });
  }

  /** What the person sent at the prompt. */
  submit(line: string): void {
    const text = line.trim();
    this.promptInterrupts = 0;
    if (text === '' || this.snapshot.phase === 'done') return;
    // Sent while a turn runs: kept, and sent when it ends.
    if (this.snapshot.phase === 'turn') {
      this.set({ queued: [...this.snapshot.queued, text] });
      return;
    }
    void this.run(text);
  }

  private async run(text: string): Promise<void> {
    this.transcript.user(text);
    await this.act(() => (text.startsWith('/') ? chatCommand(text, this.commandHost) : this.turn(text)));
  }

  /** Runs `step` as the chat's business of the moment; then what was sent meanwhile, or the prompt. */
  private async act(step: () => Promise<number | undefined>): Promise<void> {
    this.set({ phase: 'turn' });
    await this.ready;
    const code = await step();
    if (code !== undefined) return this.exit(code);
    if (this.snapshot.queued.length > 0) {
      const [next, ...rest] = this.snapshot.queued;
      this.set({ queued: rest });
      return this.run(next);
    }
    this.set({ phase: 'prompt', waiting: undefined });
  }

  /** Ctrl-D at an empty prompt: leave, once the turn running (and what was sent after it) is done. */
  leave(): void {
    if (this.snapshot.phase === 'turn') this.set({ queued: [...this.snapshot.queued, '/quit'] });
    else this.exit(EXIT.OK);
  }

  /** Ctrl-C: in a turn, the first cancels the task and the second leaves; at the prompt, twice leaves. */
  interrupt(): void {
    const stop = this.stop;
    if (stop) {
      stop.presses += 1;
      // A question open when the turn is canceled is left unanswered.
      this.snapshot.asking?.dismiss();
      if (stop.presses === 1 && stop.cancel) {
        this.transcript.notice(
          `${this.style.yellow('Canceling the task…')} ${this.style.dim('(Ctrl-C again to leave now)')}`,
        );
        stop.cancel().catch((err: unknown) => {
          this.transcript.notice(
            `${this.style.red('Could not cancel:')} ${safeLine(err instanceof Error ? err.message : String(err))}`,
          );
        });
        return;
      }
      stop.controller.abort(new Error('Interrupted'));
      return;
    }
    // At the prompt, or between a turn's end and the prompt's return (the usage is being read).
    if (this.snapshot.phase === 'done') return;
    this.promptInterrupts += 1;
    if (this.promptInterrupts >= 2 || this.now() - this.canceledAt < SECOND_PRESS_MS) {
      this.exit(EXIT.INTERRUPTED);
      return;
    }
    this.say(this.style.dim('(Ctrl-C again or /quit to leave)'));
  }

  /** Puts a dialog to the person; undefined when the turn was canceled meanwhile. */
  private ask(asked: DialogSpec, edit?: () => Promise<ApprovalAnswer>): Promise<Answered> {
    const spec = this.fitted(asked);
    return new Promise((resolve) => {
      const close = (answered: Answered): void => {
        if (this.snapshot.asking !== asking) return;
        this.set({ asking: undefined, waiting: 'Working' });
        resolve(answered);
      };
      const asking: Asking = {
        id: this.nextDialog++,
        spec,
        answer: close,
        dismiss: () => close(undefined),
        ...(edit
          ? {
              onEdit: async () => {
                try {
                  const edited = await edit();
                  close({ choice: 'edit', edited: edited.edited });
                  return undefined;
                } catch (err) {
                  return err instanceof Error ? err.message : String(err);
                }
              },
            }
          : {}),
      };
      this.set({ asking, waiting: undefined });
    });
  }

  /**
   * A question whose text would not fit on the screen beside its choices (a long diff) has it written to
   * the transcript first, whole and once: a dialog taller than the screen would be redrawn from its top.
   */
  private fitted(spec: DialogSpec): DialogSpec {
    const columns = this.io.err.columns || 80;
    const room = (this.io.err.rows || 24) - spec.choices.length - 8;
    if (rowsOf(`${spec.title}\n${spec.body}`, Math.max(1, columns - 4)) <= room) return spec;
    this.say(`${this.style.bold(spec.title)}\n${spec.body}`);
    return { ...spec, body: this.style.dim('(what runs is shown in full above)') };
  }

  private async decide(request: ApprovalRequest): Promise<ApprovalAnswer | undefined> {
    const tools = this.tools;
    // A follow-up of a terminal the person allowed is part of that command: not asked again.
    if (tools?.isAllowedFollowUp(request)) return { decision: 'approve' };
    let answer: ApprovalAnswer | undefined;
    if (this.allowances.coversGate(request)) {
      answer = { decision: 'approve' };
      this.say(this.style.dim(`✓ ${subjectOf(request)}: allowed for this session`));
    } else {
      const preview = await tools?.gatePreview(request);
      const spec = gateDialog(request, this.style, editorCommand(this.io.env), preview);
      const edit = request.options.includes('edit') ? () => editGate(request, this.io) : undefined;
      const said = await this.ask(spec, edit);
      answer = this.answerOf(request, said);
    }
    if (answer && answer.decision !== 'reject' && request.subject.kind === 'tool') {
      // Approved at the gate: the client does not ask again when the call arrives.
      const args = answer.decision === 'edit' ? answer.edited : request.subject.args;
      tools?.preApprove(request.subject.tool, args as Record<string, unknown>);
    }
    return answer;
  }

  private answerOf(request: ApprovalRequest, said: Answered): ApprovalAnswer | undefined {
    if (!said) return undefined;
    const subject = request.subject;
    switch (said.choice) {
      case 'once':
        this.say(this.style.dim(`✓ ${subjectOf(request)}: ${subject.kind === 'plan' ? 'approved' : 'allowed once'}`));
        return { decision: 'approve' };
      case 'session':
        if (subject.kind === 'tool') {
          const { command, args, env } = subject.args;
          if (subject.tool === 'terminal_create' && typeof command === 'string') {
            this.allowances.allowCommand(command, Array.isArray(args) ? args : [], env);
          } else this.allowances.allowTool(subject.tool);
          this.setStatus({ allowed: this.allowances.describe() });
        }
        this.say(this.style.dim(`✓ ${subjectOf(request)}: allowed for this session`));
        return { decision: 'approve' };
      case 'edit':
        this.say(this.style.dim(`✓ ${subjectOf(request)}: edited`));
        return { decision: 'edit', edited: said.edited };
      case 'deny':
        this.transcript.notice(
          `${this.style.yellow(`✗ ${subjectOf(request)}: denied`)}${said.reason ? ` (${safeLine(said.reason)})` : ''}`,
        );
        return {
          decision: 'reject',
          ...(said.reason ? { reason: said.reason.slice(0, MAX_APPROVAL_REASON_LENGTH) } : {}),
        };
    }
  }

  /** The local tools' questions, put as dialogs; what the session allows is not asked. */
  private readonly questions: ToolAsker = {
    warn: (line) => this.transcript.notice(line),
    confirm: async (question) => {
      const what = questionSubject(question);
      if (this.allowances.coversQuestion(question)) {
        this.say(this.style.dim(`✓ ${what}: allowed for this session`));
        return true;
      }
      const said = await this.ask(toolDialog(question));
      const allowed = said?.choice === 'once' || said?.choice === 'session';
      const how = !said
        ? 'not answered'
        : said.choice === 'session'
          ? 'allowed for this session'
          : allowed
            ? 'allowed once'
            : 'denied';
      this.say(this.style.dim(`${allowed ? '✓' : '✗'} ${what}: ${how}`));
      if (said?.choice === 'session') {
        if (question.kind === 'write') this.allowances.allowTool('fs_write_text_file');
        if (question.kind === 'command') {
          const { command, args, env } = question.preview;
          this.allowances.allowCommand(command, args, env);
        }
        this.setStatus({ allowed: this.allowances.describe() });
      }
      return allowed;
    },
  };

  private onEvent(event: TurnEvent, stop: TurnStop): void {
    this.transcript.event(event);
    switch (event.kind) {
      case 'task':
        this.conversation.contextId = event.contextId;
        stop.cancel = () => this.client.tasks.cancel({ id: event.taskId });
        return;
      case 'message':
        if (event.contextId) this.conversation.contextId = event.contextId;
        this.set({ waiting: undefined });
        return;
      case 'text':
      case 'answer':
        this.set({ waiting: undefined });
        return;
      case 'plan':
        this.conversation.plan = event.plan;
        this.set({ waiting: 'Working' });
        return;
      case 'tool-call':
        this.set({ waiting: `Running ${safeLine(event.call.name)}` });
        return;
      case 'tool-result':
        this.set({ waiting: 'Working' });
        return;
      case 'status':
        if (event.state === 'working' && !event.text) this.set({ waiting: 'Working' });
        else if (isProgressNote(event.state, event.text)) {
          this.transcript.notice(this.style.dim(`${event.state}: ${safeLine(event.text)}`));
        }
        return;
      default:
        return;
    }
  }

  /** One turn (`waiting`: answers that task's request in place, sending no text); a code when the chat ends. */
  private async turn(text: string, waiting?: Task): Promise<number | undefined> {
    const stop = new TurnStop();
    this.stop = stop;
    const taskId = this.conversation.answersTask;
    this.conversation.answersTask = undefined;
    this.conversation.waitingTaskId = undefined;
    this.set({ waiting: 'Thinking' });
    try {
      const outcome = await runTurn(
        (request) => this.client.stream(request, { signal: stop.controller.signal }),
        {
          text,
          contextId: this.conversation.contextId,
          taskId,
          waiting,
          capabilities: this.tools?.capabilities,
          metadata: this.allowances.metadata(this.tools?.metadata),
        },
        {
          onEvent: (event) => this.onEvent(event, stop),
          decide: (request) => this.decide(request),
          runClientCalls: this.tools ? (request) => this.tools!.run(request, this.questions) : undefined,
        },
      );
      if (stop.controller.signal.aborted) return EXIT.INTERRUPTED;
      this.after(outcome);
    } catch (err) {
      if (stop.controller.signal.aborted) return EXIT.INTERRUPTED;
      this.transcript.notice(describeError(err, this.style, this.options));
    } finally {
      this.stop = undefined;
      this.tools?.endTurn();
      this.transcript.endTurn();
      if (stop.presses > 0) this.canceledAt = this.now();
      this.set({ waiting: undefined, asking: undefined });
    }
    await this.refreshSession();
    void this.refreshApprovals();
    return undefined;
  }

  private after(outcome: TurnOutcome): void {
    const note = (text: string): void => this.transcript.notice(this.style.yellow(text));
    if (outcome.unanswered === 'malformed') {
      this.conversation.waitingTaskId = outcome.taskId;
      note('The task waits on a request this client cannot read: /cancel ends it.');
    } else if (outcome.unanswered === 'approval' || outcome.unanswered === 'client-request') {
      // Its status text is addressed to programs ("Answer with a cleveragents/…"): said in words here.
      this.conversation.waitingTaskId = outcome.taskId;
      note(`The task waits for ${outcome.unanswered === 'approval' ? 'an approval' : 'this client'}.`);
    } else if (outcome.state === 'input-required' || outcome.unanswered) {
      this.conversation.waitingTaskId = outcome.taskId;
      this.conversation.answersTask = outcome.taskId;
      note(outcome.statusText ? safeText(outcome.statusText) : 'The agent waits for your answer.');
    } else if (outcome.state !== 'completed') {
      this.transcript.notice(outcomeMessage(outcome, this.io, this.options));
    }
    if (outcome.contextId) this.conversation.contextId = outcome.contextId;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
