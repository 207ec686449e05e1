import type { ApprovalRequest } from '@cleveragents/contract';
import { argsOf, exactArgs, gateDeadline, planChecklist } from '../render.js';
import { safeRendered, visibleText } from '../safe-text.js';
import type { Style } from '../style.js';
import { commandLine, type ToolQuestion } from '../tools.js';
import type { Choice } from './dialog.js';

/** A dialog's content: what is asked, exactly what runs, the choices offered. */
export interface DialogSpec {
  title: string;
  body: string;
  choices: Choice[];
  /** Deny takes a reason, sent to the agent with the rejection. */
  askReason: boolean;
}

const ONCE: Choice = { key: 'a', label: 'Allow once', value: 'once' };
const DENY: Choice = { key: 'd', label: 'Deny', value: 'deny' };

/** What "for this session" covers for a gate: its tool, or for a command exactly that command. */
function sessionLabel(tool: string, args: Record<string, unknown>): string {
  if (tool === 'terminal_create' && typeof args.command === 'string') {
    const list = Array.isArray(args.args) ? (args.args as unknown[]) : [];
    return `Allow \`${commandLine(args.command, list)}\` for this session`;
  }
  return `Allow ${visibleText(tool)} for this session`;
}

/** An approval gate as a dialog; `preview` is the tools' own (a write's diff, a command's sandbox). */
export function gateDialog(request: ApprovalRequest, style: Style, editor: string, preview?: string): DialogSpec {
  const subject = request.subject;
  const approve = request.options.includes('approve');
  const choices: Choice[] = [];
  let title: string;
  let body: string;
  if (subject.kind === 'plan') {
    title = 'Approve this plan?';
    body = planChecklist({ entries: subject.entries }, style);
    if (approve) choices.push({ ...ONCE, label: 'Approve' });
  } else if (subject.kind === 'agent') {
    title = `${visibleText(subject.actor)} asks`;
    body = visibleText(subject.text);
    if (approve) choices.push({ ...ONCE, label: 'Approve' });
  } else {
    const args = argsOf(subject.args);
    title = `Allow ${visibleText(subject.tool)}?`;
    // The preview is the tools' text built from the agent's arguments: only its colours pass.
    body = [style.dim(exactArgs(subject.tool, args)), preview ? safeRendered(preview) : ''].filter(Boolean).join('\n');
    if (approve) choices.push(ONCE, { key: 's', label: sessionLabel(subject.tool, args), value: 'session' });
  }
  const deadline = gateDeadline(request);
  if (deadline) body = `${body}\n${style.dim(deadline)}`;
  if (request.options.includes('reject')) choices.push(DENY);
  if (request.options.includes('edit')) choices.push({ key: 'e', label: `Edit in ${editor}`, value: 'edit' });
  return { title, body, choices, askReason: true };
}

/** A question of the local tools (a write, a command, a secret's read) as a dialog. */
export function toolDialog(question: ToolQuestion): DialogSpec {
  const choices: Choice[] = [ONCE];
  if (question.kind === 'write' && question.preview.runsCode === undefined) {
    choices.push({ key: 's', label: 'Allow writes for this session', value: 'session' });
  }
  if (question.kind === 'command') {
    const line = commandLine(question.preview.command, question.preview.args);
    choices.push({ key: 's', label: `Allow \`${line}\` for this session`, value: 'session' });
  }
  choices.push(DENY);
  // The question's first line is its title: the rest says exactly what runs.
  return { title: question.question, body: question.shown, choices, askReason: false };
}
