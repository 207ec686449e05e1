import { realpath } from 'node:fs/promises';
import { relative, resolve } from 'node:path';
import type { ApprovalRequest, ClientCallResult, ClientCapabilities, ClientRequest } from '../../contract/index.js';
import {
  ClientToolError,
  ClientToolRunner,
  type CommandPreview,
  type ReadPreview,
  type SandboxMode,
  type WritePreview,
} from '../tools/index.js';
import type { Io } from './context.js';
import { CliError, EXIT } from './exit-codes.js';
import { askYesNo } from './prompts.js';
import { safeText, visibleText } from './safe-text.js';
import type { Style } from './style.js';

/** The flags `chat`, `send` and `plans execute` take for the agent's access to this machine. */
export interface ToolOptions {
  workspace?: string;
  allowWrites?: boolean;
  allowCommands?: boolean;
  sandbox?: SandboxMode;
  commandTimeout?: string;
  /** `--no-tools` sets it false. */
  tools?: boolean;
}

/** The client-side tools of one CLI run, as the commands use them. */
export interface LocalTools {
  capabilities: ClientCapabilities;
  workspace: string;
  sandboxed: boolean;
  /** Runs the calls; a question to the user (a write, a command) goes through `ask`, if given. */
  run(request: ClientRequest, ask?: Asker): Promise<ClientCallResult[]>;
  /** What to show at a tool's approval gate besides its arguments (a write's diff, a command's sandbox). */
  gatePreview(request: ApprovalRequest): Promise<string | undefined>;
  /** The user approved this call at its gate: do not ask again when it arrives (in this turn). */
  preApprove(tool: string, args: Record<string, unknown>): void;
  /** The turn ended: approvals whose call never came are forgotten, never to let a later call through. */
  endTurn(): void;
  dispose(): Promise<void>;
}

/** Wraps each question put to the user (the chat hands the keyboard over to it). */
export type Asker = <T>(question: () => Promise<T>) => Promise<T>;

const askDirectly: Asker = (question) => question();

/** A unified diff with added lines green and removed lines red. */
export function colorDiff(diff: string, style: Style): string {
  return diff
    .split('\n')
    .map((line) => {
      if (line.startsWith('+++') || line.startsWith('---')) return style.bold(line);
      if (line.startsWith('+')) return style.green(line);
      if (line.startsWith('-')) return style.red(line);
      if (line.startsWith('@@')) return style.cyan(line);
      return line;
    })
    .join('\n');
}

function commandLine(command: string, args: readonly unknown[]): string {
  return [command, ...args.map(String)].map((w) => (/^[\w./=:@%+-]+$/.test(w) ? w : JSON.stringify(w))).join(' ');
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
  const approvedWrites: { path: string; content: unknown }[] = [];
  const approvedCommands: { command: unknown; args: unknown[] }[] = [];
  let warned = false;
  let ask: Asker = askDirectly;

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
    io.err.write(
      `${style.yellow('?')} ${style.bold(`${preview.isNew ? 'Create' : 'Change'} ${name}`)}\n${colorDiff(safeText(preview.diff), style)}\n`,
    );
    if (preview.runsCode !== undefined) {
      io.err.write(
        `${style.yellow('!')} ${style.bold(`This write configures code that runs later: ${preview.runsCode}.`)}\n`,
      );
    }
    return ask(() =>
      askYesNo(preview.runsCode !== undefined ? 'Apply this write (it runs code later)?' : 'Apply this write?', io),
    );
  };
  const confirmRead = async (preview: ReadPreview): Promise<boolean> => {
    if (!mode.interactive) return false;
    io.err.write(
      `${style.yellow('?')} ${style.bold(`The agent asks to read ${visibleText(preview.relativePath)}`)}: ${style.yellow(preview.secret)}\n`,
    );
    return ask(() => askYesNo(`Hand ${preview.secret} (${visibleText(preview.relativePath)}) to the agent?`, io));
  };
  const confirmCommand = async (preview: CommandPreview): Promise<boolean> => {
    const i = approvedCommands.findIndex(
      (c) => c.command === preview.command && JSON.stringify(c.args) === JSON.stringify(preview.args),
    );
    if (i >= 0) {
      approvedCommands.splice(i, 1);
      return true;
    }
    if (!mode.interactive) return false;
    const where = preview.sandboxed ? 'sandboxed' : style.yellow('NOT sandboxed');
    io.err.write(
      `${style.yellow('?')} ${style.bold(`Run ${commandLine(preview.command, preview.args)}`)} ${style.dim(`in ${relative(root, preview.cwd) || '.'} · ${where} · ${preview.timeoutMs / 1000} s limit`)}\n`,
    );
    return ask(() => askYesNo('Run this command?', io));
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
    sandbox: options.sandbox ?? 'auto',
    commandTimeoutMs: timeoutSeconds * 1000,
    onUnsandboxed: (status) => {
      if (warned) return;
      warned = true;
      io.err.write(
        `${style.yellow('warning:')} commands run without a sandbox${status.reason ? ` (${status.reason})` : ''}; --sandbox require refuses them\n`,
      );
    },
  });
  const sandbox = await runner.sandboxStatus();
  if (options.sandbox === 'require' && !sandbox.sandboxed) {
    throw new CliError(
      `--sandbox require: no sandbox on this machine${sandbox.reason ? ` (${sandbox.reason})` : ''}`,
      EXIT.FAILED,
      'install bubblewrap (apt-get install bubblewrap, dnf install bubblewrap) or choose --sandbox auto',
    );
  }

  return {
    capabilities: runner.capabilities(),
    workspace: root,
    sandboxed: sandbox.sandboxed,
    async run(request, asker) {
      ask = asker ?? askDirectly;
      try {
        return await runner.runAll(request.requests);
      } finally {
        ask = askDirectly;
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
          const diff = colorDiff(safeText(preview.diff.split('\n').slice(1).join('\n').trimEnd()), style);
          if (preview.runsCode === undefined) return diff;
          return `${diff}\n${style.yellow('!')} This write configures code that runs later: ${preview.runsCode}; it will be asked about again.`;
        } catch (error) {
          if (!(error instanceof ClientToolError)) throw error;
          return style.yellow(`  No preview: ${safeText(error.message, { multiline: false })} (${error.reason})`);
        }
      }
      if (request.subject.tool === 'terminal_create' && typeof args.command === 'string') {
        const list = Array.isArray(args.args) ? args.args : [];
        return style.dim(`  ${commandLine(args.command, list)} · ${sandbox.sandboxed ? 'sandboxed' : 'not sandboxed'}`);
      }
      return undefined;
    },
    preApprove(tool, args) {
      if (tool === 'fs_write_text_file') approvedWrites.push({ path: String(args.path), content: args.content });
      if (tool === 'terminal_create') {
        approvedCommands.push({ command: args.command, args: Array.isArray(args.args) ? args.args : [] });
      }
    },
    endTurn() {
      approvedWrites.length = 0;
      approvedCommands.length = 0;
    },
    dispose: () => runner.dispose(),
  };
}
