import type { Command } from 'commander';
import type { ApprovalState, ApprovalView } from '@cleveragents/contract';
import { ioFor, withClient, type GlobalOptions } from '../context.js';
import { CliError, EXIT } from '../exit-codes.js';
import { instant, pageParams, writePage, writeRecord, type PageFlags } from '../pages.js';
import { planChecklist, span } from '../render.js';
import { safeLine, safeText } from '../safe-text.js';
import { fields } from '../table.js';

/**
 * What an approval asks, in one line: the plan's size, the tool and its arguments, or an external agent's
 * question (its words made safe for the terminal).
 */
export function asks(approval: ApprovalView): string {
  const subject = approval.subject;
  if (subject.kind === 'plan') {
    return `plan of ${subject.entries.length} step${subject.entries.length === 1 ? '' : 's'}`;
  }
  if (subject.kind === 'agent') {
    const asked = safeLine(`${subject.actor} (${subject.origin}) asks: ${subject.text}`);
    return asked.length > 70 ? `${asked.slice(0, 69)}…` : asked;
  }
  const text = `${subject.tool} ${JSON.stringify(subject.args)}`;
  return text.length > 70 ? `${text.slice(0, 69)}…` : text;
}

/**
 * How a pending approval's timeout stands at `now`: the time left, or how long it is overdue (it keeps
 * waiting); `—` without a timeout or once it ended.
 */
export function timeLeft(approval: ApprovalView, now: number = Date.now()): string {
  if (approval.expiresAt === null || approval.state !== 'pending') return '—';
  const left = Date.parse(approval.expiresAt) - now;
  return left > 0 ? `${span(left)} left` : `overdue ${span(-left)}`;
}

/** The `expires` line of `approvals show`: when, and what then (or what came of it). */
function expiry(approval: ApprovalView, now: number): string {
  if (approval.expiresAt === null) return 'never (waits until answered)';
  const at = instant(approval.expiresAt);
  if (approval.state !== 'pending') return at;
  const then = approval.onTimeout === 'keep-waiting' ? 'keeps waiting' : 'denied';
  const left = Date.parse(approval.expiresAt) - now;
  return left > 0 ? `${at} (${span(left)} left, then ${then})` : `${at} (overdue ${span(-left)}, ${then})`;
}

export async function list(options: GlobalOptions, command: Command): Promise<number> {
  const opts = command.opts<
    PageFlags & { state?: ApprovalState; session?: string; all?: boolean; namespace?: string }
  >();
  const io = ioFor(options);
  const paging = pageParams(opts);
  return withClient(options, io, async (client) => {
    const now = Date.now();
    const page = await client.approvals.list({
      ...paging,
      ...(opts.namespace ? { namespace: opts.namespace } : {}),
      ...(opts.state ? { state: opts.state } : {}),
      ...(opts.session ? { sessionId: opts.session } : {}),
      ...(opts.all ? { requester: '*' } : {}),
    });
    return writePage(io, options, page, {
      empty: opts.state ? `No ${opts.state} approvals.` : 'No approvals wait for an answer.',
      header: ['APPROVAL', 'STATE', 'ASKS', 'REQUESTER', 'SESSION', 'ASKED', 'TIMEOUT'],
      row: (a) => [a.approvalId, a.state, asks(a), a.requester, a.sessionId, instant(a.askedAt), timeLeft(a, now)],
    });
  });
}

/** An approval as a person reads it: who asks what, how it stands, and the plan or the tool call in full. */
function shown(approval: ApprovalView, io: ReturnType<typeof ioFor>): string {
  const head = fields([
    ['approval', approval.approvalId],
    ['state', approval.state],
    ['requester', approval.requester],
    ['session', approval.sessionId],
    ['task', approval.taskId],
    ['asked', instant(approval.askedAt)],
    ['expires', expiry(approval, Date.now())],
    [
      'answered',
      approval.answeredAt
        ? `${instant(approval.answeredAt)} by ${approval.answeredBy ?? '—'} (${approval.channel ?? '—'})`
        : '—',
    ],
    ...(approval.reason ? ([['reason', approval.reason]] as [string, string][]) : []),
    ['sha-256', approval.subjectHash],
  ]);
  const subject = approval.subject;
  const body =
    subject.kind === 'plan'
      ? planChecklist({ entries: subject.entries }, io.outStyle)
      : subject.kind === 'agent'
        ? fields([
            ['agent', safeLine(`${subject.actor} (${subject.origin}), its task ${subject.remoteTaskId}`)],
            ['asks', safeText(subject.text, { multiline: true })],
            ...(subject.data === undefined
              ? []
              : ([['data', JSON.stringify(subject.data, null, 2)]] as [string, string][])),
            ...(approval.edited === undefined
              ? []
              : ([['answered', JSON.stringify(approval.edited, null, 2)]] as [string, string][])),
          ])
        : fields([
            ['tool', subject.tool],
            ['runs', subject.method ?? '—'],
            ['args', JSON.stringify(subject.args, null, 2)],
            ...(approval.edited === undefined
              ? []
              : ([['edited to', JSON.stringify(approval.edited, null, 2)]] as [string, string][])),
          ]);
  return `${head}\n\n${body}`;
}

export async function show(options: GlobalOptions, _command: Command, approvalId: string): Promise<number> {
  const io = ioFor(options);
  return withClient(options, io, async (client) =>
    writeRecord(io, options, await client.approvals.get({ approvalId }), (approval) => shown(approval, io)),
  );
}

function answer(decision: 'approve' | 'reject') {
  return async (options: GlobalOptions, command: Command, approvalId: string): Promise<number> => {
    const opts = command.opts<{ reason?: string }>();
    const io = ioFor(options);
    if (opts.reason !== undefined && opts.reason.trim() === '') {
      throw new CliError('--reason must say why, not be empty', EXIT.USAGE);
    }
    return withClient(options, io, async (client) => {
      const answered = await client.approvals.answer({
        approvalId,
        decision,
        ...(decision === 'reject' && opts.reason ? { reason: opts.reason } : {}),
      });
      const said = `${safeLine(approvalId)} ${safeLine(answered.state)}; task ${safeLine(answered.taskId)} goes on`;
      io.out.write(options.json ? `${JSON.stringify(answered)}\n` : `${said}\n`);
      return EXIT.OK;
    });
  };
}

export const approve = answer('approve');
export const deny = answer('reject');
