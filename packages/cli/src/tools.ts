import { realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, relative, resolve } from 'node:path';
import {
  GATE_REQUEST_KEY,
  isTerminalFollowUp,
  type ApprovalRequest,
  type ClientCallResult,
  type ClientCapabilities,
  type ClientRequest,
} from '@cleveragents/contract';
import {
  ClientToolError,
  ClientToolRunner,
  type CommandPreview,
  type EnvVariable,
  type ReadPreview,
  type SandboxMode,
  type WritePreview,
} from './tools/index.js';
import type { Io } from './context.js';
import { CliError, EXIT } from './exit-codes.js';
import { ownCheckout, relationTo } from './own-source.js';
import { askYesNo } from './prompts.js';
import { safeLine, visibleText } from './safe-text.js';
import type { Style } from './style.js';
import { captureContent } from './telemetry/settings.js';

/** The flags `chat`, `send` and `plans execute` take for the agent's access to this machine. */
export interface ToolOptions {
  workspace?: string;
  allowWrites?: boolean;
  allowCommands?: boolean;
  sandbox?: SandboxMode;
  /** `--sandbox-read DIR`: more folders sandboxed commands may read. */
  sandboxRead?: string[];
  /** `--sandbox-network`: sandboxed commands may use the network. */
  sandboxNetwork?: boolean;
  /** `--allow-env NAME`: variables the agent may set besides the allow-list. */
  allowEnv?: string[];
  commandTimeout?: string;
  /** `--no-tools` sets it false. */
  tools?: boolean;
}

/** The client-side tools of one CLI run, as the commands use them. */
export interface LocalTools {
  capabilities: ClientCapabilities;
  /**
   * Message metadata asking the server to gate no more than the flags do (`--allow-writes`,
   * `--allow-commands`: `cleveragents/gates` `allow`); undefined without such a flag.
   */
  metadata: Record<string, unknown> | undefined;
  workspace: string;
  sandboxed: boolean;
  /** How commands run, for the banner: sandboxed, not sandboxed (the person allowed it), or not offered and why. */
  commands: string;
  /**
   * Runs the calls; a question to the user (a write, a command) goes through `ask`: the line-mode prompts
   * handed the keyboard by an Asker, or a UI's own ToolAsker.
   */
  run(request: ClientRequest, ask?: Asker | ToolAsker): Promise<ClientCallResult[]>;
  /** What to show at a tool's approval gate besides its arguments (a write's diff, a command's sandbox). */
  gatePreview(request: ApprovalRequest): Promise<string | undefined>;
  /**
   * Whether a gate is a follow-up (output, exit, kill, release) of a terminal this run made: part of the
   * command the person allowed, approved without asking. Nothing runs by it: a call still passes the runner.
   */
  isAllowedFollowUp(request: ApprovalRequest): boolean;
  /** The user approved this call at its gate: do not ask again when it arrives (in this turn). */
  preApprove(tool: string, args: Record<string, unknown>): void;
  /** The turn ended: approvals whose call never came are forgotten, never to let a later call through. */
  endTurn(): void;
  dispose(): Promise<void>;
}

/** Wraps each question put to the user (the chat hands the keyboard over to it). */
export type Asker = <T>(question: () => Promise<T>) => Promise<T>;

const askDirectly: Asker = (question) => question();

/**
 * A question the tools put to the person before a call runs: `shown` says exactly what runs (styled,
 * every control escaped), `question` is the yes/no asked of it.
 */
export type ToolQuestion = { shown: string; question: string } & (
  | { kind: 'write'; preview: WritePreview }
  | { kind: 'command'; preview: CommandPreview }
  | { kind: 'read'; preview: ReadPreview }
);

/** How the person is asked the tools' questions: the line-mode prompts, or the interactive UI's dialog. */
export interface ToolAsker {
  confirm(question: ToolQuestion): Promise<boolean>;
  /**
   * Says a warning of the tools met during the calls (commands run without a sandbox), one line, styled; a
   * UI that owns the screen shows it in its transcript. Without it the warning goes to stderr.
   */
  warn?(line: string): void;
}

/** The line-mode way: what runs printed to stderr, then a yes/no prompt (default no) handed the keyboard by `ask`. */
export function lineAsker(io: Io, ask: Asker = askDirectly): ToolAsker {
  return {
    confirm: async ({ shown, question }) => {
      io.err.write(`${shown}\n`);
      return ask(() => askYesNo(question, io));
    },
  };
}

/** A unified diff with added lines green and removed lines red; the file's own controls shown as escapes. */
export function colorDiff(diff: string, style: Style): string {
  return diff
    .split('\n')
    .map((raw) => {
      // What will be written, shown exactly: every control escaped (but the tabs of indentation).
      const line = raw.split('\t').map(visibleText).join('\t');
      if (line.startsWith('+++') || line.startsWith('---')) return style.bold(line);
      if (line.startsWith('+')) return style.green(line);
      if (line.startsWith('-')) return style.red(line);
      if (line.startsWith('@@')) return style.cyan(line);
      return line;
    })
    .join('\n');
}

/** A command line as it runs, each word quoted when it needs to be and every control shown escaped. */
export function commandLine(command: string, args: readonly unknown[]): string {
  return [command, ...args.map(String)]
    .map((w) => visibleText(/^[\w./=:@%+-]+$/.test(w) ? w : `'${w.replace(/'/g, `'"'"'`)}'`))
    .join(' ');
}

/** The variables of a command, one `NAME=value` per line, exactly (controls shown escaped). */
function envLines(env: readonly EnvVariable[], style: Style): string {
  return env.map(({ name, value }) => `\n    ${style.bold(visibleText(name))}=${visibleText(value)}`).join('');
}

/** The agent's variables of a gate's or a call's arguments, as the runner reads them (ill-formed: undefined). */
function envOf(value: unknown): EnvVariable[] | undefined {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) return undefined;
  const env: EnvVariable[] = [];
  for (const item of value as unknown[]) {
    const { name, value: v } = (item ?? {}) as { name?: unknown; value?: unknown };
    if (typeof name !== 'string' || typeof v !== 'string') return undefined;
    env.push({ name, value: v });
  }
  return env;
}

function sameEnv(a: readonly EnvVariable[], b: readonly EnvVariable[]): boolean {
  const key = (env: readonly EnvVariable[]) => JSON.stringify([...env].map((v) => [v.name, v.value]).sort());
  return a.length === b.length && key(a) === key(b);
}

/**
 * Why a folder is too wide to hand to an agent without being asked for by name: the root, your home
 * or a folder above it, or a top-level system folder. Undefined when it is a fine workspace.
 */
export function tooWideWorkspace(root: string, home: string): string | undefined {
  if (root === '/') return 'the root of the file system';
  if (home !== '/' && root === home) return 'your home folder';
  if (home !== '/' && home.startsWith(`${root}/`)) return 'a folder above your home folder';
  if (dirname(root) === '/') return 'a top-level system folder';
  return undefined;
}

/** The question before a command: exactly what runs, where, with which variables, in which sandbox. */
function describeCommand(preview: CommandPreview, root: string, style: Style): string {
  const where = preview.sandboxed
    ? `sandboxed${preview.network ? ', with network' : ''}`
    : style.yellow(`NOT sandboxed${preview.sandboxReason ? ` (${preview.sandboxReason})` : ''}`);
  const program = preview.program !== preview.command ? style.dim(`\n    program ${visibleText(preview.program)}`) : '';
  const vars = preview.env.length > 0 ? `${style.dim('\n    with')}${envLines(preview.env, style)}` : '';
  return (
    `${style.bold(`Run ${commandLine(preview.command, preview.args)}`)} ` +
    `${style.dim(`in ${visibleText(relative(root, preview.cwd) || '.')} · ${where} · ${preview.timeoutMs / 1000} s limit`)}` +
    `${program}${vars}`
  );
}

export async function localTools(
  options: ToolOptions,
  io: Io,
  mode: { interactive: boolean },
): Promise<LocalTools | undefined> {
  if (options.tools === false) return undefined;
  const style = io.errStyle;
  const timeoutSeconds = Number(options.commandTimeout ?? '120');
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0) {
    throw new CliError(
      `--command-timeout must be a positive number of seconds, not "${options.commandTimeout}"`,
      EXIT.USAGE,
    );
  }
  const workspace = resolve(options.workspace ?? process.cwd());
  const root = await realpath(workspace).catch(() => {
    throw new CliError(`The workspace ${workspace} does not exist`, EXIT.USAGE, 'pass --workspace DIR naming a folder');
  });
  const home = await realpath(io.env.HOME || homedir()).catch(() => resolve(io.env.HOME || homedir()));
  const wide = tooWideWorkspace(root, home);
  if (wide !== undefined) {
    if (options.workspace === undefined) {
      // Started in such a folder by accident: the agent gets no access at all rather than all of it.
      io.err.write(
        `${style.yellow('warning:')} ${root} is ${wide}: too wide a workspace to hand to an agent, so it gets no ` +
          `access to files or commands; run from a project folder, or name one with --workspace DIR\n`,
      );
      return undefined;
    }
    io.err.write(
      `${style.yellow('warning:')} the workspace ${root} is ${wide}: the agent may reach everything in it\n`,
    );
  }
  const checkout = ownCheckout();
  const relation = checkout === undefined ? undefined : relationTo(root, checkout);
  if (relation !== undefined) {
    // The agent would work on the code of the very client (and, with --local, server) it runs through.
    io.err.write(
      `${style.yellow('warning:')} the workspace ${visibleText(root)} ${relation} this cleveragents client's own source ` +
        `tree (${visibleText(checkout!)}): the agent may change the very tool that runs it; name another folder with --workspace DIR\n`,
    );
  }
  const approvedWrites: { path: string; content: unknown }[] = [];
  const approvedCommands: { command: unknown; args: unknown[]; env: EnvVariable[]; cwd: string }[] = [];
  let warned = false;
  let questions: ToolAsker = lineAsker(io);

  const confirmWrite = async (preview: WritePreview): Promise<boolean> => {
    const i = approvedWrites.findIndex(
      (w) => resolve(root, String(w.path)) === preview.path && w.content === preview.newContent,
    );
    // Code run later is asked about like a command, here, whatever the gate approved.
    if (i >= 0 && preview.runsCode === undefined) {
      approvedWrites.splice(i, 1);
      return true;
    }
    if (!mode.interactive) return false;
    const name = visibleText(preview.relativePath);
    const runsLater =
      preview.runsCode !== undefined
        ? `\n${style.yellow('!')} ${style.bold(`This write configures code that runs later: ${preview.runsCode}.`)}`
        : '';
    return questions.confirm({
      kind: 'write',
      preview,
      shown: `${style.yellow('?')} ${style.bold(`${preview.isNew ? 'Create' : 'Change'} ${name}`)}\n${colorDiff(preview.diff, style)}${runsLater}`,
      question: preview.runsCode !== undefined ? 'Apply this write (it runs code later)?' : 'Apply this write?',
    });
  };
  const confirmRead = async (preview: ReadPreview): Promise<boolean> => {
    if (!mode.interactive) return false;
    return questions.confirm({
      kind: 'read',
      preview,
      shown: `${style.yellow('?')} ${style.bold(`The agent asks to read ${visibleText(preview.relativePath)}`)}: ${style.yellow(preview.secret)}`,
      question: `Hand ${preview.secret} (${visibleText(preview.relativePath)}) to the agent?`,
    });
  };
  const confirmCommand = async (preview: CommandPreview): Promise<boolean> => {
    // An approval given at a gate covers exactly what it showed: the command, its arguments, its
    // variables and its folder (the sandbox is the run's, the same for both).
    const i = approvedCommands.findIndex(
      (c) =>
        c.command === preview.command &&
        JSON.stringify(c.args) === JSON.stringify(preview.args) &&
        sameEnv(c.env, preview.env) &&
        c.cwd === preview.cwd,
    );
    if (i >= 0) {
      approvedCommands.splice(i, 1);
      return true;
    }
    if (!mode.interactive) return false;
    return questions.confirm({
      kind: 'command',
      preview,
      shown: `${style.yellow('?')} ${describeCommand(preview, root, style)}`,
      question: 'Run this command?',
    });
  };

  const runner = new ClientToolRunner({
    workspace: root,
    fsRead: true,
    fsWrite: mode.interactive || options.allowWrites === true,
    terminal: mode.interactive || options.allowCommands === true,
    autoApproveWrites: options.allowWrites === true,
    autoApproveCommands: options.allowCommands === true,
    confirmWrite,
    confirmRead,
    confirmCommand,
    sandbox: options.sandbox ?? 'require',
    sandboxReadOnly: (options.sandboxRead ?? []).map((dir) => resolve(dir)),
    network: options.sandboxNetwork === true,
    allowEnv: options.allowEnv ?? [],
    commandTimeoutMs: timeoutSeconds * 1000,
    traceContent: captureContent(io.env),
    onUnsandboxed: (status) => {
      if (warned) return;
      warned = true;
      const line = `${style.yellow('warning:')} commands run without a sandbox${status.reason ? ` (${status.reason})` : ''}; --sandbox require refuses them`;
      if (questions.warn) questions.warn(line);
      else io.err.write(`${line}\n`);
    },
  });
  const sandbox = await runner.sandboxStatus();
  const capabilities = runner.capabilities();
  const commands = !capabilities.terminal
    ? sandbox.mode === 'require' && !sandbox.sandboxed
      ? `off: no sandbox (${sandbox.reason}); install bubblewrap, or allow unsandboxed commands with --sandbox auto`
      : 'off'
    : sandbox.sandboxed
      ? `sandboxed (bubblewrap${sandbox.network ? ', with network' : ', no network'})`
      : `NOT sandboxed (${sandbox.reason})`;

  const allow = [
    ...(options.allowWrites === true ? ['fs_write_text_file'] : []),
    ...(options.allowCommands === true ? ['terminal_create'] : []),
  ];
  return {
    // The root goes with them: the server tells the model where paths start.
    capabilities: { ...capabilities, workspace: root },
    metadata: allow.length > 0 ? { [GATE_REQUEST_KEY]: { allow } } : undefined,
    workspace: root,
    sandboxed: sandbox.sandboxed,
    commands,
    async run(request, asker) {
      questions = typeof asker === 'object' ? asker : lineAsker(io, asker);
      try {
        return await runner.runAll(request.requests);
      } finally {
        questions = lineAsker(io);
      }
    },
    async gatePreview(request) {
      if (request.subject.kind !== 'tool') return undefined;
      const args = request.subject.args;
      if (request.subject.tool === 'fs_write_text_file' && typeof args.path === 'string') {
        // Through the write's own confinement and limits: never an outside file, a FIFO, /dev/zero.
        const content = typeof args.content === 'string' ? args.content : '';
        try {
          const preview = await runner.previewWrite(args.path, content);
          const diff = colorDiff(preview.diff.split('\n').slice(1).join('\n').trimEnd(), style);
          if (preview.runsCode === undefined) return diff;
          return `${diff}\n${style.yellow('!')} This write configures code that runs later: ${preview.runsCode}; it will be asked about again.`;
        } catch (error) {
          if (!(error instanceof ClientToolError)) throw error;
          return style.yellow(`  No preview: ${safeLine(error.message)} (${error.reason})`);
        }
      }
      if (request.subject.tool === 'terminal_create' && typeof args.command === 'string') {
        const list = Array.isArray(args.args) ? args.args : [];
        const env = envOf(args.env) ?? [];
        const cwd = typeof args.cwd === 'string' ? visibleText(args.cwd) : '.';
        const where = sandbox.sandboxed ? 'sandboxed' : style.yellow('NOT sandboxed');
        return `  ${style.bold(commandLine(args.command, list))} ${style.dim(`in ${cwd} · ${where}`)}${envLines(env, style)}`;
      }
      return undefined;
    },
    isAllowedFollowUp(request) {
      const subject = request.subject;
      // A follow-up method, and the tool named after it (`terminal/output` is `terminal_output`): a gate is
      // never taken for a follow-up by its tool's name alone.
      if (subject.kind !== 'tool' || !isTerminalFollowUp(subject.method)) return false;
      if (subject.tool !== subject.method.replace('/', '_')) return false;
      // Exactly a terminal's id: a gate carrying anything more is shown to the person.
      const id = subject.args.terminalId;
      return Object.keys(subject.args).length === 1 && typeof id === 'string' && runner.madeTerminal(id);
    },
    preApprove(tool, args) {
      if (tool === 'fs_write_text_file') approvedWrites.push({ path: String(args.path), content: args.content });
      if (tool === 'terminal_create') {
        const env = envOf(args.env);
        // What the gate showed, resolved as the runner will resolve the call (a cwd that is not there matches nothing).
        const cwd = args.cwd === undefined || args.cwd === null ? '.' : args.cwd;
        if (env === undefined || typeof cwd !== 'string') return;
        approvedCommands.push({
          command: args.command,
          args: Array.isArray(args.args) ? args.args : [],
          env,
          cwd: resolve(root, cwd),
        });
      }
    },
    endTurn() {
      approvedWrites.length = 0;
      approvedCommands.length = 0;
    },
    dispose: () => runner.dispose(),
  };
}
