import type { Command } from 'commander';
import { SendMessageRequest, type StreamResponse, type TaskStatus } from '@a2a-js/sdk';
import { randomUUID } from 'node:crypto';
import { APPROVAL_RESPONSE_TYPE, type ApprovalRequest, type PlanStatus, type PlanView } from '@cleveragents/contract';
import type { CleverAgentsClient } from '@cleveragents/client/node';
import { INTERRUPTED_STATES, pendingRequestOf, turnState } from '@cleveragents/client';
import { runTurn } from '@cleveragents/client';
import { cliCommand, operand, ioFor, pickUpCommand, withClient, type GlobalOptions } from '../context.js';
import { CliError, EXIT, exitCodeForState } from '../exit-codes.js';
import { writeRecord } from '../pages.js';
import { planChecklist, usageLine } from '../render.js';
import { safeData, safeLine } from '../safe-text.js';
import { SigintGuard } from '../sigint.js';
import { untilOutputCloses } from '../output.js';
import { fields, table } from '../table.js';
import { AnswerPrinter } from '../terminal.js';
import { localTools, type ToolOptions } from '../tools.js';
import { outcomeMessage, printedAsNdjson, progressPrinter, unattendedDecision, type SendOptions } from './send.js';

export async function list(options: GlobalOptions, command: Command): Promise<number> {
  const opts = command.opts<{ status?: PlanStatus; session?: string; limit: string }>();
  const io = ioFor(options);
  const pageSize = Number(opts.limit);
  if (!Number.isInteger(pageSize) || pageSize < 1) {
    throw new CliError(`--limit must be a positive whole number, not "${opts.limit}"`, EXIT.USAGE);
  }
  return withClient(options, io, async (client) => {
    const page = await client.plans.list({
      pageSize,
      ...(opts.status ? { status: opts.status } : {}),
      ...(opts.session ? { sessionId: opts.session } : {}),
    });
    if (options.json) {
      io.out.write(`${JSON.stringify(page)}\n`);
      return EXIT.OK;
    }
    if (page.items.length === 0) {
      io.out.write('No plans.\n');
      return EXIT.OK;
    }
    const rows = safeData(page.items).map((p) => {
      const done = p.entries.filter((e) => e.status === 'completed').length;
      return [p.planId, p.status, `${done}/${p.entries.length}`, p.goal.slice(0, 60)];
    });
    io.out.write(`${table(['PLAN', 'STATUS', 'DONE', 'GOAL'], rows)}\n`);
    return EXIT.OK;
  });
}

export async function show(options: GlobalOptions, _command: Command, planId: string): Promise<number> {
  const io = ioFor(options);
  return withClient(options, io, async (client) => {
    return writeRecord(
      io,
      options,
      await client.plans.get({ planId }),
      (plan) =>
        `${fields([
          ['plan', plan.planId],
          ['goal', plan.goal],
          ['status', plan.status],
          ['revision', String(plan.revision)],
          ['session', plan.sessionId ?? '—'],
          ['task', plan.taskId ?? '—'],
          ['usage', usageLine(plan.usage, plan.budget, io.outStyle)],
        ])}\n\n${planChecklist(plan, io.outStyle)}`,
    );
  });
}

/** The plan gate a plan's task waits at, if it does. */
async function waitingGate(client: CleverAgentsClient, plan: PlanView): Promise<ApprovalRequest | undefined> {
  if (!plan.taskId) return undefined;
  const task = await client.tasks.get({ id: plan.taskId, historyLength: 0 });
  if (turnState(task.status?.state) !== 'input-required') return undefined;
  const pending = pendingRequestOf(task.status?.message?.parts);
  return pending && 'approval' in pending && pending.approval.subject.kind === 'plan' ? pending.approval : undefined;
}

/** Answers the plan gate of a waiting task, returning at once (the task goes on by itself). */
async function answerGate(
  client: CleverAgentsClient,
  plan: PlanView,
  gate: ApprovalRequest,
  decision: 'approve' | 'reject',
) {
  await client.send(
    SendMessageRequest.fromJSON({
      message: {
        messageId: randomUUID(),
        role: 'ROLE_USER',
        taskId: plan.taskId,
        contextId: plan.sessionId,
        parts: [{ data: { type: APPROVAL_RESPONSE_TYPE, requestId: gate.requestId, decision } }],
      },
      configuration: { returnImmediately: true },
    }),
  );
}

async function decideGateOr(
  options: GlobalOptions,
  planId: string,
  decision: 'approve' | 'reject',
  otherwise: (client: CleverAgentsClient, plan: PlanView) => Promise<PlanView>,
): Promise<number> {
  const io = ioFor(options);
  return withClient(options, io, async (client) => {
    const plan = await client.plans.get({ planId });
    const gate = await waitingGate(client, plan);
    let result: object;
    let said: string;
    if (gate) {
      await answerGate(client, plan, gate, decision);
      result = { planId, taskId: plan.taskId, gate: decision };
      const taskId = safeLine(plan.taskId);
      said = `${decision === 'approve' ? 'Approved' : 'Rejected'} at its gate; task ${taskId} goes on (${safeLine(pickUpCommand(taskId, options))})`;
    } else {
      const changed = await otherwise(client, plan);
      result = changed;
      said = `${safeLine(planId)} ${safeLine(changed.status)}`;
    }
    io.out.write(options.json ? `${JSON.stringify(result)}\n` : `${said}\n`);
    return EXIT.OK;
  });
}

export function approve(options: GlobalOptions, _command: Command, planId: string): Promise<number> {
  return decideGateOr(
    options,
    planId,
    'approve',
    async (client, plan) => await client.plans.approve({ planId, expectedRevision: plan.revision }),
  );
}

export function reject(options: GlobalOptions, _command: Command, planId: string): Promise<number> {
  return decideGateOr(options, planId, 'reject', async (client, plan) => {
    if (plan.status !== 'draft') {
      throw new CliError(
        `Plan ${planId} is ${plan.status} and waits at no gate: there is nothing to reject`,
        EXIT.FAILED,
        `cancel it with \`${cliCommand(['plans', 'cancel', operand(planId)], options)}\``,
      );
    }
    return await client.plans.cancel({ planId, expectedRevision: plan.revision });
  });
}

function change(operation: 'pause' | 'resume' | 'cancel') {
  return async (options: GlobalOptions, _command: Command, planId: string): Promise<number> => {
    const io = ioFor(options);
    return withClient(options, io, async (client) => {
      const result = await client.plans[operation]({ planId });
      io.out.write(options.json ? `${JSON.stringify(result)}\n` : `${safeLine(planId)} ${safeLine(result.status)}\n`);
      return EXIT.OK;
    });
  };
}

export const pause = change('pause');
export const resume = change('resume');
export const cancel = change('cancel');

/**
 * A task followed with SubscribeToTask, which can show a wait before the server has stored it: an
 * answer sent at once would then be taken for a new message. So when the subscription ends on a wait,
 * this ends only once GetTask shows that wait (or a later status), for at most 10 s.
 */
async function* followStored(
  client: CleverAgentsClient,
  taskId: string,
  events: AsyncIterable<StreamResponse>,
): AsyncIterable<StreamResponse> {
  let last: TaskStatus | undefined;
  for await (const event of events) {
    const payload = event.payload;
    if (payload?.$case === 'task') last = payload.value.status;
    if (payload?.$case === 'statusUpdate') last = payload.value.status;
    yield event;
  }
  if (!last || !INTERRUPTED_STATES.has(turnState(last.state))) return;
  const shown = last.timestamp ?? '';
  for (const deadline = Date.now() + 10_000; Date.now() < deadline;) {
    const stored = (await client.tasks.get({ id: taskId, historyLength: 0 })).status;
    if ((stored?.timestamp ?? '') >= shown) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Runs an approved plan and follows its task as `send` follows a message. */
export async function execute(options: GlobalOptions, command: Command, planId: string): Promise<number> {
  const opts = command.opts<ToolOptions & Pick<SendOptions, 'approve'>>();
  const io = ioFor(options);
  return withClient(options, io, async (client) => {
    const tools = await localTools(opts, io, { interactive: false });
    const sigint = new SigintGuard(io);
    try {
      const started = await client.plans.execute({
        planId,
        ...(tools ? { clientCapabilities: tools.capabilities } : {}),
      });
      const taskId = started.taskId;
      sigint.onCancel(() => client.tasks.cancel({ id: taskId }));
      const answer = new AnswerPrinter(io.out, io.outStyle);
      const show = options.json ? () => undefined : progressPrinter(io, answer);
      const tap = (events: AsyncIterable<StreamResponse>) => printedAsNdjson(events, io, options.json === true);
      const outcome = await runTurn(
        (request) => tap(client.stream(request, { signal: untilOutputCloses(sigint.signal) })),
        { text: '', taskId },
        {
          onEvent: show,
          decide: (request) => Promise.resolve(unattendedDecision(opts.approve, request, tools)),
          runClientCalls: tools ? (request) => tools.run(request) : undefined,
        },
        () =>
          tap(followStored(client, taskId, client.tasks.subscribe({ id: taskId }, { signal: untilOutputCloses() }))),
      );
      await answer.finish();
      const code = sigint.interrupted ? EXIT.INTERRUPTED : exitCodeForState(outcome.state, outcome.unanswered);
      if (options.json) io.out.write(`${JSON.stringify({ result: { ...outcome, planId, exitCode: code } })}\n`);
      else if (code !== EXIT.OK) io.err.write(`${outcomeMessage(outcome, io, options)}\n`);
      return code;
    } finally {
      sigint.dispose();
      await tools?.dispose();
    }
  });
}
