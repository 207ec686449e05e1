import type { ApprovalRequest } from '@cleveragents/contract';
import { safeLine, visibleText } from '../safe-text.js';
import { commandLine, type ToolQuestion } from '../tools.js';

/** What a gate asks about, in a few words: the plan, a tool, or exactly a command. */
export function subjectOf(request: ApprovalRequest): string {
  const subject = request.subject;
  if (subject.kind === 'plan') return 'plan';
  if (subject.kind === 'agent') return `a question of ${visibleText(subject.actor)}`;
  const { command, args } = subject.args;
  if (subject.tool === 'terminal_create' && typeof command === 'string') {
    return `\`${commandLine(command, Array.isArray(args) ? args : [])}\``;
  }
  return visibleText(subject.tool);
}

/** What a local tool's question asks about, in a few words. */
export function questionSubject(question: ToolQuestion): string {
  if (question.kind === 'command') return `\`${commandLine(question.preview.command, question.preview.args)}\``;
  return `${question.kind} ${visibleText(question.preview.relativePath)}`;
}

/** The host of a server's URL, for the status line. */
export function hostOf(url: string | undefined): string {
  if (!url) return 'server';
  try {
    return new URL(url).host;
  } catch {
    return safeLine(url);
  }
}
