import type { PlanDataView, PlanEntry, ToolCallData, ToolResultData } from '@cleveragents/contract';
import { safeLine, visibleText } from './safe-text.js';
import type { Style } from './style.js';

/**
 * How turn events read on a terminal: the plan as a checklist, tool calls and results on one line
 * each. Pure functions of the data and a Style, shared by `chat`, `send` and `plans show`. The data
 * is the agent's: made safe (`safeLine`) before it is styled.
 */

const MARKS: Record<PlanEntry['status'], string> = {
  pending: '[ ]',
  in_progress: '[~]',
  completed: '[x]',
  failed: '[!]',
  skipped: '[-]',
};

function markOf(entry: PlanEntry, style: Style): string {
  const mark = MARKS[entry.status];
  switch (entry.status) {
    case 'completed':
      return style.green(mark);
    case 'in_progress':
      return style.cyan(mark);
    case 'failed':
      return style.red(mark);
    default:
      return style.dim(mark);
  }
}

/** The plan as a checklist: a title line, then one line per entry with its status mark and priority. */
export function planChecklist(plan: PlanDataView, style: Style): string {
  const done = plan.entries.filter((e) => e.status === 'completed').length;
  const title = [
    style.bold('Plan'),
    plan.status ? `(${safeLine(plan.status)})` : '',
    style.dim(`${done}/${plan.entries.length} done`),
    plan.planId ? style.dim(safeLine(plan.planId)) : '',
  ]
    .filter(Boolean)
    .join(' ');
  const lines = plan.entries.map((entry) => {
    const priority = entry.priority === 'medium' ? '' : ` ${style.dim(`(${safeLine(entry.priority)})`)}`;
    return `  ${markOf(entry, style)} ${safeLine(entry.content)}${priority}`;
  });
  return [title, ...lines].join('\n');
}

/** A value on one line, cut at `max` characters. */
export function oneLine(value: unknown, max = 80): string {
  // JSON.stringify gives undefined (whatever its type says) for undefined, a function or a symbol.
  const json = typeof value === 'string' ? value : (JSON.stringify(value) as string | undefined);
  const text = safeLine(json ?? String(value)).replace(/\s+/g, ' ');
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The arguments of a call in short: `path=/a/b content=(42 chars)`. */
export function shortArgs(args: Record<string, unknown>): string {
  return Object.entries(args)
    .map(([key, value]) => {
      // Contents are summed up; names, paths and commands are shown (cut when very long).
      if (typeof value === 'string' && (key === 'content' || value.includes('\n'))) {
        return `${key}=(${value.length} chars)`;
      }
      return `${safeLine(key)}=${oneLine(value, 100)}`;
    })
    .join(' ');
}

/** A call's arguments: wire data, which a broken agent may leave out. */
export function argsOf(args: Record<string, unknown> | undefined): Record<string, unknown> {
  return args ?? {};
}

/** A value as a gate shows it: strings quoted, every control escaped (`visibleText`), nothing cut. */
function exactValue(value: unknown): string {
  if (typeof value === 'string') return `"${visibleText(value).replace(/"/g, '\\"')}"`;
  if (Array.isArray(value)) return `[${value.map(exactValue).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([key, item]) => `${exactValue(key)}:${exactValue(item)}`)
      .join(',')}}`;
  }
  return String(value);
}

/**
 * The arguments of a call a person is asked to allow, exactly as they will be used: `key="value"`,
 * controls and line breaks shown escaped, nothing cut. Only a write's content is summed up: its gate
 * shows it as a diff.
 */
export function exactArgs(tool: string, args: Record<string, unknown>): string {
  return Object.entries(args)
    .map(([key, value]) =>
      tool === 'fs_write_text_file' && key === 'content' && typeof value === 'string'
        ? `content=(${value.length} chars)`
        : `${visibleText(key)}=${exactValue(value)}`,
    )
    .join(' ');
}

export function toolCallLine(call: ToolCallData, style: Style): string {
  return `${style.magenta('→')} ${style.bold(safeLine(call.name))} ${style.dim(shortArgs(argsOf(call.args)))}`;
}

export function toolResultLine(result: ToolResultData, style: Style): string {
  if (result.error) return `${style.red('✗')} ${safeLine(result.name)}: ${oneLine(result.error.message, 100)}`;
  // Any value at all: only what it is found to hold is summed up.
  const held = result.result;
  const value: Partial<Record<string, unknown>> | undefined =
    typeof held === 'object' && held !== null ? held : undefined;
  let summary = 'done';
  if (value && typeof value.content === 'string') summary = `${value.content.length} chars`;
  else if (value && typeof value.terminalId === 'string') summary = `terminal ${safeLine(value.terminalId)}`;
  else if (value && typeof value.exitCode === 'number') summary = `exit ${value.exitCode}`;
  else if (value && typeof value.output === 'string') summary = `${value.output.length} chars of output`;
  return `${style.green('✓')} ${safeLine(result.name)} ${style.dim(summary)}`;
}

export interface UsageView {
  tokens?: number;
  toolCalls?: number;
  wallTimeMs?: number;
}

export interface BudgetView {
  tokens?: number;
  toolCalls?: number;
  wallTimeSeconds?: number;
}

/** Usage after a turn, against the budget where one is set: `tokens 115/10000 · tool calls 2 · 3.1 s`. */
export function usageLine(usage: UsageView | undefined, budget: BudgetView | null | undefined, style: Style): string {
  if (!usage) return '';
  const of = (used: number | undefined, max: number | null | undefined): string =>
    `${used ?? 0}${max ? `/${max}` : ''}`;
  const parts = [`tokens ${of(usage.tokens, budget?.tokens)}`, `tool calls ${of(usage.toolCalls, budget?.toolCalls)}`];
  if (usage.wallTimeMs !== undefined) {
    const limit = budget?.wallTimeSeconds ? `/${budget.wallTimeSeconds} s` : ' s';
    parts.push(`${(usage.wallTimeMs / 1000).toFixed(1)}${limit}`);
  }
  return style.dim(parts.join(' · '));
}

/** A span of time, its two largest units: `45s`, `14m 59s`, `2h 5m`, `3d 4h`. */
export function span(ms: number): string {
  let left = Math.max(0, Math.floor(ms / 1000));
  const parts: string[] = [];
  for (const [size, unit] of [
    [86400, 'd'],
    [3600, 'h'],
    [60, 'm'],
    [1, 's'],
  ] as const) {
    const count = Math.floor(left / size);
    left -= count * size;
    if (count > 0 || (parts.length > 0 && parts.length < 2)) parts.push(`${count}${unit}`);
    if (parts.length === 2) break;
  }
  return parts.length > 0 ? parts.join(' ') : '0s';
}

/**
 * What a gate's request says of its profile's timeout, at `now`: how long it waits for an answer and what
 * then, or how long it is overdue; undefined without a timeout.
 */
export function gateDeadline(
  request: { expiresAt?: string; onTimeout?: 'deny' | 'keep-waiting' },
  now: number = Date.now(),
): string | undefined {
  const due = request.expiresAt === undefined ? NaN : Date.parse(request.expiresAt);
  if (!Number.isFinite(due)) return undefined;
  const left = due - now;
  if (left <= 0) return `Overdue by ${span(-left)}: it waits on for an answer.`;
  const then = request.onTimeout === 'keep-waiting' ? 'then it is shown overdue' : 'then it is denied';
  return `Answer within ${span(left)}, ${then}.`;
}
