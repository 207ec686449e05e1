import type { ApprovalSubject, ApprovalView } from '@cleveragents/contract';
import type { ApprovalLink } from './approval-links.js';

/** The payload's `type`: what a receiver recognises a new approval by. */
export const APPROVAL_REQUESTED_EVENT = 'cleveragents/approval-requested';

/** The longest command, path or plan step the payload quotes; the rest is cut with an ellipsis. */
const QUOTE_LIMIT = 200;
/** Argument values quoted (shortened, credentials masked); every other argument is named only. */
const QUOTED_ARGUMENTS = ['command', 'path', 'cwd'];
/** `password=…`, `token: …`, `Authorization: Bearer …`, `--api-key …`: the value after such a name is masked. */
const CREDENTIAL =
  /\b(authorization|bearer|token|secret|password|passwd|pwd|api[_-]?key|access[_-]?key|credentials?)(["']?\s*[:=]\s*|\s+)(?:bearer\s+|basic\s+)?("[^"]*"|'[^']*'|[^\s"'&]+)/gi;

/** What a webhook receives for a new approval. */
export interface ApprovalRequestedPayload {
  type: typeof APPROVAL_REQUESTED_EVENT;
  /** A line a chat tool's incoming webhook shows as it is (Slack, Teams, Mattermost read `text`). */
  text: string;
  title: string;
  /** What is asked, short and without argument values other than a command or path (credentials masked). */
  asked: string;
  approval: {
    approvalId: string;
    namespace: string;
    requester: string;
    sessionId: string;
    taskId: string;
    requestId: string;
    kind: ApprovalSubject['kind'];
    subjectHash: string;
    options: string[];
    askedAt: string;
    expiresAt: string | null;
  };
  /** The signed link to the console's page of the approval; null when the server has no console URL. */
  link: ApprovalLink | null;
}

/** The payload of `approval`'s webhook delivery. */
export function approvalRequestedPayload(
  approval: ApprovalView,
  link: ApprovalLink | undefined,
): ApprovalRequestedPayload {
  const { title, asked } = describeSubject(approval.subject);
  const { expiresAt } = approval;
  const open = link
    ? `Open ${link.url} to answer (sign in first).`
    : 'Answer it from a CleverAgents client (this server has no console URL for links).';
  return {
    type: APPROVAL_REQUESTED_EVENT,
    text: `${title} in ${approval.namespace}, asked by ${approval.requester}: ${asked}. ${open}`,
    title,
    asked,
    approval: {
      approvalId: approval.approvalId,
      namespace: approval.namespace,
      requester: approval.requester,
      sessionId: approval.sessionId,
      taskId: approval.taskId,
      requestId: approval.requestId,
      kind: approval.subject.kind,
      subjectHash: approval.subjectHash,
      options: [...approval.options],
      askedAt: approval.askedAt,
      expiresAt,
    },
    link: link ?? null,
  };
}

function describeSubject(subject: ApprovalSubject): { title: string; asked: string } {
  if (subject.kind === 'plan') {
    const first = subject.entries.at(0);
    const steps = `${subject.entries.length} step${subject.entries.length === 1 ? '' : 's'}`;
    return {
      title: 'Approval needed: a plan',
      asked: first ? `run a plan of ${steps}, starting "${quote(first.content)}"` : `run a plan of ${steps}`,
    };
  }
  if (subject.kind === 'agent') {
    return {
      title: `Input needed: the external agent ${quote(subject.actor, 80)}`,
      asked: `answer ${quote(subject.origin, 120)}, which asks "${quote(subject.text || '(no text)')}"`,
    };
  }
  const args: Record<string, unknown> = subject.args;
  const names = Object.keys(args);
  const quoted = QUOTED_ARGUMENTS.filter((name) => typeof args[name] === 'string').map(
    (name) => `${name} "${quote(args[name] as string)}"`,
  );
  const others = names.filter((name) => !quoted.some((q) => q.startsWith(`${name} `)));
  const parts = [
    ...quoted,
    ...(others.length > 0 ? [`arguments ${others.map((name) => quote(name, 40)).join(', ')}`] : []),
  ];
  const via = subject.method ? ` (${subject.method})` : '';
  return {
    title: `Approval needed: ${quote(subject.tool, 80)}`,
    asked: `call ${quote(subject.tool, 80)}${via}${parts.length > 0 ? ` with ${parts.join('; ')}` : ''}`,
  };
}

/** `text` on one line, credentials masked, at most `limit` characters. */
export function quote(text: string, limit = QUOTE_LIMIT): string {
  const line = text.replace(CREDENTIAL, (_all, name: string, sep: string) => `${name}${sep}***`).replace(/\s+/g, ' ');
  return line.length > limit ? `${line.slice(0, limit - 1)}\u2026` : line;
}
