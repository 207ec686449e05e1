import { GATE_REQUEST_KEY, type ApprovalRequest } from '@cleveragents/contract';
import { commandLine, type ToolQuestion } from '../tools.js';
import { visibleText } from '../safe-text.js';

/**
 * What the person allowed for the rest of this session: tools by name, and commands by their exact
 * command line (with their variables). A later gate or client question they cover is approved without
 * asking; the tools are also asked of the server's gate (`cleveragents/gates` allow), which narrows
 * them to what the profile permits.
 */
export class SessionAllowances {
  private readonly tools = new Set<string>();
  private readonly commands = new Map<string, string>();

  allowTool(tool: string): void {
    this.tools.add(tool);
  }

  allowCommand(command: string, args: readonly unknown[], env: unknown): void {
    this.commands.set(commandKey(command, args, env), commandLine(command, args));
  }

  /** Whether an approval gate is covered: a tool allowed, or exactly a command allowed. */
  coversGate(request: ApprovalRequest): boolean {
    const subject = request.subject;
    if (subject.kind !== 'tool') return false;
    if (subject.tool === 'terminal_create') {
      const { command, args, env } = subject.args;
      return typeof command === 'string' && this.commands.has(commandKey(command, listOf(args), env));
    }
    return this.tools.has(subject.tool);
  }

  /** Whether a client question is covered; code a write configures to run later is always asked about. */
  coversQuestion(question: ToolQuestion): boolean {
    if (question.kind === 'write') {
      return this.tools.has('fs_write_text_file') && question.preview.runsCode === undefined;
    }
    if (question.kind === 'command') {
      const { command, args, env } = question.preview;
      return this.commands.has(commandKey(command, args, env));
    }
    return false;
  }

  /** The message metadata: `base`'s gate request with the tools allowed here added. */
  metadata(base: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
    if (this.tools.size === 0) return base;
    const asked = (base?.[GATE_REQUEST_KEY] as { allow?: string[] } | undefined)?.allow ?? [];
    return { ...base, [GATE_REQUEST_KEY]: { allow: [...new Set([...asked, ...this.tools])] } };
  }

  /** For the status line: each allowance in a few words. */
  describe(): string[] {
    return [...[...this.tools].map(visibleText), ...[...this.commands.values()].map((line) => `\`${line}\``)];
  }
}

function listOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** A command, its arguments and its variables, as one key: allowing one allows exactly it. */
function commandKey(command: string, args: readonly unknown[], env: unknown): string {
  const vars = Array.isArray(env)
    ? (env as { name?: unknown; value?: unknown }[]).map((v) => [String(v.name), String(v.value)]).sort()
    : [];
  return JSON.stringify([command, args.map(String), vars]);
}
