import type { PlanDataView, ToolCallData, ToolResultData } from '@cleveragents/contract';
import type { TurnEvent } from '@cleveragents/client';
import { commandLine } from '../tools.js';
import { argsOf, oneLine, planChecklist, shortArgs } from '../render.js';
import { SafeTextStream, safeLine, safeText } from '../safe-text.js';
import type { Style } from '../style.js';
import { ANSWER_RESTART_MARKER, type MarkdownRenderer } from '../terminal.js';
import { finishedBlocks } from './markdown-blocks.js';

/**
 * The conversation as the interactive UI shows it: finished lines, written once to the scrollback
 * (ink's Static), and the live part below them — the plan, the tools of the moment, the answer's
 * unfinished block. Every text from the agent is made safe here, before it is styled.
 */

/** A finished piece of the transcript: styled, safe, written once. */
export interface Line {
  id: number;
  text: string;
  /** An empty line after it (an answer's block, a plan). */
  gap?: boolean;
}

/** A tool call as one compact line, its output (a command's) below it. */
export interface ToolLine {
  callId: string;
  /** The call in short: the tool and its arguments, or a command's command line (safe). */
  call: string;
  state: 'running' | 'done' | 'failed';
  /** After the call: an exit code, a size, an error (safe). */
  summary: string;
  /** A command's output (safe), shown trimmed to its last lines unless expanded. */
  output: string;
  /** A terminal this call made: its follow-ups (output, exit, release) are folded into this line. */
  terminalId?: string;
}

export interface TranscriptView {
  lines: readonly Line[];
  plan?: PlanDataView;
  tools: readonly ToolLine[];
  /** The answer's unfinished block, as written so far (safe). */
  tail: string;
  /** Ctrl-O: tools' output in full. */
  expanded: boolean;
}

/** How many lines of a command's output show under it unless expanded. */
export const OUTPUT_LINES = 8;

const FOLLOW_UPS = new Set(['terminal_output', 'terminal_wait_for_exit', 'terminal_kill', 'terminal_release']);

/** The tool line as text: the mark, the call, the summary, then the output (its last lines unless expanded). */
export function toolText(tool: ToolLine, style: Style, expanded: boolean): string {
  const mark =
    tool.state === 'running' ? style.magenta('•') : tool.state === 'failed' ? style.red('✗') : style.green('✓');
  const head = `${mark} ${tool.call}${tool.summary ? ` ${style.dim(tool.summary)}` : ''}`;
  const output = tool.output.replace(/\n+$/, '');
  if (!output) return head;
  const lines = output.split('\n');
  const hidden = expanded ? 0 : Math.max(0, lines.length - OUTPUT_LINES);
  const shown = lines.slice(hidden).map((line) => `  ${style.dim('│')} ${line}`);
  const more =
    hidden > 0 ? [`  ${style.dim(`│ … ${hidden} more line${hidden === 1 ? '' : 's'} above (Ctrl-O shows all)`)}`] : [];
  return [head, ...more, ...shown].join('\n');
}

function callText(call: ToolCallData, style: Style): string {
  const args = argsOf(call.args);
  if (call.name === 'terminal_create' && typeof args.command === 'string') {
    const list = Array.isArray(args.args) ? (args.args as unknown[]) : [];
    return `${style.bold(safeLine(call.name))} ${commandLine(args.command, list)}`;
  }
  const short = shortArgs(args);
  return `${style.bold(safeLine(call.name))}${short ? ` ${style.dim(short)}` : ''}`;
}

function record(value: unknown): Partial<Record<string, unknown>> | undefined {
  return typeof value === 'object' && value !== null ? value : undefined;
}

/** What a tool's result says in short, and a command's output, from any value (the agent's). */
function resultOf(result: ToolResultData): { summary?: string; output?: string; terminalId?: string } {
  if (result.error) return { summary: oneLine(result.error.message, 100) };
  const value = record(result.result);
  if (!value) return {};
  const exit = record(value.exitStatus) ?? value;
  const code = typeof exit.exitCode === 'number' ? `exit ${exit.exitCode}` : undefined;
  if (typeof value.output === 'string') return { output: safeText(value.output), summary: code };
  if (typeof value.terminalId === 'string') return { terminalId: value.terminalId };
  if (code) return { summary: code };
  if (typeof value.content === 'string') return { summary: `${value.content.length} chars` };
  return {};
}

export class Transcript {
  private lines: Line[] = [];
  private plan?: PlanDataView;
  private tools: ToolLine[] = [];
  /** Follow-up call id → the terminal's line it belongs to. */
  private followUps = new Map<string, ToolLine>();
  private pending = '';
  private safe = new SafeTextStream();
  private expanded = false;
  /** Tool lines written trimmed, shown in full when Ctrl-O turns expansion on. */
  private trimmed: ToolLine[] = [];
  /** What was said this turn: a notice is said once. */
  private said = new Set<string>();
  private nextId = 0;
  private snapshot: TranscriptView;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly style: Style,
    private readonly markdown: MarkdownRenderer,
    /** The terminal's width: answers are rendered to it when they are written. */
    public width: number,
  ) {
    this.snapshot = this.build();
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  view = (): TranscriptView => this.snapshot;

  private build(): TranscriptView {
    return {
      lines: this.lines,
      plan: this.plan,
      tools: this.tools,
      tail: this.pending,
      expanded: this.expanded,
    };
  }

  private changed(): void {
    this.snapshot = this.build();
    for (const listener of this.listeners) listener();
  }

  private commit(text: string, gap = false): void {
    // A new array: ink's Static writes what is new in it.
    this.lines = [...this.lines, { id: this.nextId++, text, ...(gap ? { gap } : {}) }];
  }

  /**
   * Text of the client's own (styled, safe), written as it stands: after the answer so far and the tools
   * done, before those still running (a command's approval comes while its call runs).
   */
  say(text: string): void {
    this.flushAnswer();
    this.commitFinishedTools();
    this.commit(text);
    this.changed();
  }

  /** A notice (a cancel, a rejection, a failure): said once in a turn, whoever says it again. */
  notice(text: string): void {
    if (this.said.has(text)) return;
    this.said.add(text);
    this.say(text);
  }

  /** The person's message, as they sent it. */
  user(text: string): void {
    this.say(`${this.style.cyan('›')} ${safeText(text)}`);
  }

  event(event: TurnEvent): void {
    switch (event.kind) {
      case 'text':
      case 'message':
        this.answer(event.kind === 'text' ? event.delta : event.text);
        break;
      case 'answer':
        this.flushAnswer();
        this.commit(this.style.dim(ANSWER_RESTART_MARKER));
        this.answer(event.text);
        break;
      case 'plan':
        this.plan = event.plan;
        break;
      case 'tool-call':
        this.toolCall(event.call);
        break;
      case 'tool-result':
        this.toolResult(event.result);
        break;
      case 'warning':
        this.notice(`${this.style.yellow('warning:')} ${safeLine(event.text)}`);
        return;
      default:
        return;
    }
    this.changed();
  }

  private answer(delta: string): void {
    this.commitTools();
    this.pending += this.safe.push(delta);
    const { done, tail } = finishedBlocks(this.pending);
    if (done.trim() !== '') {
      this.commit(this.markdown(done, this.width), true);
      this.pending = tail;
    }
  }

  /** The answer's unfinished block, rendered and written: something else comes after it. */
  private flushAnswer(): void {
    this.pending += this.safe.end();
    if (this.pending.trim() !== '') this.commit(this.markdown(this.pending, this.width), true);
    this.pending = '';
  }

  private commitTool(tool: ToolLine): void {
    this.commit(toolText(tool, this.style, this.expanded));
    if (!this.expanded && tool.output.split('\n').length > OUTPUT_LINES) this.trimmed.push(tool);
  }

  private commitTools(): void {
    for (const tool of this.tools) this.commitTool(tool);
    this.tools = [];
    this.followUps.clear();
  }

  /** The tools at the head of the live ones that are done (a terminal stays: its follow-ups fold into it). */
  private commitFinishedTools(): void {
    const running = this.tools.findIndex((t) => t.state === 'running' || t.terminalId !== undefined);
    const done = running < 0 ? this.tools : this.tools.slice(0, running);
    if (done.length === 0) return;
    this.tools = this.tools.slice(done.length);
    for (const tool of done) this.commitTool(tool);
    for (const [id, owner] of this.followUps) if (done.includes(owner)) this.followUps.delete(id);
  }

  private toolCall(call: ToolCallData): void {
    this.flushAnswer();
    const terminalId = argsOf(call.args).terminalId;
    const owner = FOLLOW_UPS.has(call.name) ? this.tools.find((t) => t.terminalId === terminalId) : undefined;
    if (owner) {
      this.followUps.set(call.id, owner);
      return;
    }
    this.tools = [
      ...this.tools,
      { callId: call.id, call: callText(call, this.style), state: 'running', summary: '', output: '' },
    ];
  }

  private toolResult(result: ToolResultData): void {
    const said = resultOf(result);
    const owner = this.followUps.get(result.id);
    if (owner) {
      // A follow-up tells what the command did: its output, its exit.
      this.replaceTool(owner, {
        ...(said.output !== undefined ? { output: said.output } : {}),
        ...(said.summary && !result.error ? { summary: said.summary } : {}),
      });
      return;
    }
    const tool = this.tools.find((t) => t.callId === result.id);
    const fields: Partial<ToolLine> = {
      state: result.error ? 'failed' : 'done',
      summary: said.summary ?? '',
      ...(said.output !== undefined ? { output: said.output } : {}),
      ...(said.terminalId !== undefined ? { terminalId: said.terminalId } : {}),
    };
    if (tool) this.replaceTool(tool, fields);
    else {
      // A result without its call (a call rejected at its gate never ran): a line of its own.
      const call = this.style.bold(safeLine(result.name));
      this.tools = [...this.tools, { callId: result.id, call, state: 'done', summary: '', output: '', ...fields }];
    }
  }

  private replaceTool(tool: ToolLine, fields: Partial<ToolLine>): void {
    const next = { ...tool, ...fields };
    this.tools = this.tools.map((t) => (t === tool ? next : t));
    for (const [id, owner] of this.followUps) if (owner === tool) this.followUps.set(id, next);
  }

  /** Ctrl-O: tools' output in full, or trimmed again; output already written trimmed is written again in full. */
  toggleExpanded(): void {
    this.expanded = !this.expanded;
    if (this.expanded) {
      for (const tool of this.trimmed) this.commit(toolText(tool, this.style, true));
    }
    this.trimmed = [];
    this.changed();
  }

  /** The turn ended: the answer's last block, the tools and the plan as it ended are written. */
  endTurn(): void {
    this.flushAnswer();
    this.commitTools();
    if (this.plan) this.commit(planChecklist(this.plan, this.style), true);
    this.plan = undefined;
    this.safe = new SafeTextStream();
    this.said.clear();
    this.changed();
  }
}
