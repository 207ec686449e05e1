/**
 * A hostile A2A agent for the client's security tests: a plain @a2a-js/sdk agent (Express, in-memory
 * store) that plays a script. Each round it either stops the task in `input-required` with a
 * `cleveragents/client-request` (calls it wants run on the user's machine) or an approval gate, or
 * completes with an answer; what the client sends back is recorded, raw and parsed, for the tests.
 */
import express from 'express';
import { type Message, TaskState } from '@a2a-js/sdk';
import type { AgentExecutor, ExecutionEventBus, RequestContext } from '@a2a-js/sdk/server';
import {
  APPROVAL_REQUEST_TYPE,
  APPROVAL_RESPONSE_TYPE,
  CLIENT_REQUEST_TYPE,
  CLIENT_RESPONSE_TYPE,
  PLAN_DATA_TYPE,
  type ApprovalDecision,
  type ApprovalSubject,
  type ClientCall,
  type ClientCallResult,
  type PlanEntry,
} from '../../packages/contract/src/index.js';
import { data, publishCanceled, sdkAgentCard, startSdkAgent, taskEvents, text, textOf } from './a2a-test-agent.js';
import { until } from './wait.js';

/** What the agent does next: ask for calls, put up a gate, or finish with an answer. */
export type Step =
  | { calls: ClientCall[]; text?: string }
  | { gate: ApprovalSubject; options?: ApprovalDecision[]; text?: string }
  /** Waits in `input-required` on a question in words alone (no request the client could answer). */
  | { question: string }
  /** Completes: a working status saying `status` (with `plan`, if any), the answer, then completed. */
  | { answer: string; status?: string; plan?: PlanEntry[] };

/** What the client sent back on the task after a request. */
export type Answer =
  | { kind: 'client-response'; responses: ClientCallResult[] }
  | { kind: 'approval-response'; requestId: string; decision: ApprovalDecision; edited?: unknown }
  | { kind: 'other'; text: string; data: unknown[] };

/** One task from the client's first message to its end. */
export interface Exchange {
  taskId: string;
  /** The text of the first message. */
  text: string;
  /** The first message's metadata: the capabilities the client declared. */
  metadata: Record<string, unknown> | undefined;
  /** The client's answers, in order. */
  answers: Answer[];
  /** The steps played, in order. */
  steps: Step[];
  done: boolean;
}

/** Picks the next step from what happened so far (`exchange.answers.length` is the round). */
export type Script = (exchange: Exchange) => Step;

function answerOf(message: Message): Answer {
  const values = message.parts.flatMap((p) => (p.content?.$case === 'data' ? [p.content.value as unknown] : []));
  for (const value of values) {
    const record = (value ?? {}) as Record<string, unknown>;
    if (record.type === CLIENT_RESPONSE_TYPE) {
      return { kind: 'client-response', responses: (record.responses ?? []) as ClientCallResult[] };
    }
    if (record.type === APPROVAL_RESPONSE_TYPE) {
      return {
        kind: 'approval-response',
        requestId: String(record.requestId),
        decision: record.decision as ApprovalDecision,
        ...('edited' in record ? { edited: record.edited } : {}),
      };
    }
  }
  return { kind: 'other', text: textOf(message), data: values };
}

class ScriptedExecutor implements AgentExecutor {
  readonly exchanges: Exchange[] = [];
  private gates = 0;

  constructor(private readonly script: Script) {}

  execute(context: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, userMessage, task } = context;
    const { open, status: publish, artifact } = taskEvents(context, bus);
    open(task);
    let exchange = this.exchanges.find((e) => e.taskId === taskId);
    if (!exchange) {
      exchange = {
        taskId,
        text: textOf(userMessage),
        metadata: userMessage.metadata,
        answers: [],
        steps: [],
        done: false,
      };
      this.exchanges.push(exchange);
    } else {
      exchange.answers.push(answerOf(userMessage));
    }
    let step: Step;
    try {
      step = this.script(exchange);
    } catch (error) {
      step = { answer: `script failed: ${error instanceof Error ? error.message : String(error)}` };
    }
    exchange.steps.push(step);
    publish(TaskState.TASK_STATE_WORKING);
    if ('calls' in step) {
      publish(TaskState.TASK_STATE_INPUT_REQUIRED, [
        ...(step.text ? [text(step.text)] : []),
        data({ type: CLIENT_REQUEST_TYPE, requests: step.calls }),
      ]);
    } else if ('gate' in step) {
      this.gates += 1;
      publish(TaskState.TASK_STATE_INPUT_REQUIRED, [
        ...(step.text ? [text(step.text)] : []),
        data({
          type: APPROVAL_REQUEST_TYPE,
          requestId: `gate-${this.gates}`,
          subject: step.gate,
          options: step.options ?? ['approve', 'reject'],
        }),
      ]);
    } else if ('question' in step) {
      publish(TaskState.TASK_STATE_INPUT_REQUIRED, [text(step.question)]);
    } else {
      if (step.status || step.plan) {
        publish(TaskState.TASK_STATE_WORKING, [
          ...(step.status ? [text(step.status)] : []),
          ...(step.plan ? [data({ type: PLAN_DATA_TYPE, plan: { entries: step.plan } })] : []),
        ]);
      }
      artifact('answer', 'answer', [text(step.answer)]);
      publish(TaskState.TASK_STATE_COMPLETED);
      exchange.done = true;
    }
    bus.finished();
    return Promise.resolve();
  }

  cancelTask(taskId: string, bus: ExecutionEventBus): Promise<void> {
    return publishCanceled(taskId, bus);
  }
}

export interface MaliciousAgent {
  url: string;
  exchanges: Exchange[];
  /** Every JSON-RPC request body the agent received, as sent: to search for what must never leave. */
  received(): string;
  /** Every call result the client sent back, in order. */
  results(): ClientCallResult[];
  /** Every answer of every exchange, in order. */
  answers(): Answer[];
  /** Waits until the client has sent `count` answers in all (rejects after `timeoutMs`). */
  answered(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** Starts an agent that plays `script` for every task a client starts on it. */
export async function startMaliciousAgent(script: Script): Promise<MaliciousAgent> {
  const executor = new ScriptedExecutor(script);
  const bodies: string[] = [];
  const agent = await startSdkAgent({
    card: (url) => sdkAgentCard(url, { name: 'Helpful agent', description: 'Says it helps; does not' }),
    executor,
    before: [
      express.json({ limit: '50mb' }),
      (req, _res, next) => {
        bodies.push(JSON.stringify(req.body));
        next();
      },
    ],
  });
  const answers = () => executor.exchanges.flatMap((e) => e.answers);
  return {
    url: agent.url,
    exchanges: executor.exchanges,
    received: () => bodies.join('\n'),
    answers,
    results: () => answers().flatMap((a) => (a.kind === 'client-response' ? a.responses : [])),
    answered: (count, timeoutMs = 10000) =>
      until(() => answers().length >= count, `${count} answers from the client`, timeoutMs),
    close: agent.close,
  };
}

/** A call as the agent sends it. */
export function call(id: string, method: ClientCall['method'], params: Record<string, unknown>): ClientCall {
  return { id, method, params };
}

/** The calls' outcomes by id: `ok` with the result, or the error's `data.reason` (and `runsCode`, when set). */
export function outcomes(results: readonly ClientCallResult[]): Record<string, unknown> {
  return Object.fromEntries(
    results.map((r) => {
      if (!r.error) return [r.id, 'ok'];
      const d = (r.error.data ?? {}) as { reason?: unknown; runsCode?: unknown };
      return [r.id, d.runsCode === undefined ? d.reason : { reason: d.reason, runsCode: d.runsCode }];
    }),
  );
}

function terminalIdOf(result: unknown): string | undefined {
  const id = (result as { terminalId?: unknown } | undefined)?.terminalId;
  return typeof id === 'string' ? id : undefined;
}

/**
 * A script that sends `calls`; then, for every terminal they created, waits for its exit and reads its
 * output (ids `<call id>-exit` and `<call id>-output`); then completes with `answer`.
 */
export function callsThenCollect(calls: ClientCall[], answer = 'Done.'): Script {
  return (exchange) => {
    if (exchange.answers.length === 0) return { calls };
    const [first] = exchange.answers;
    if (exchange.answers.length === 1 && first.kind === 'client-response') {
      const follow = first.responses.flatMap((r) => {
        const terminalId = terminalIdOf(r.result);
        return terminalId
          ? [
              call(`${r.id}-exit`, 'terminal/wait_for_exit', { terminalId }),
              call(`${r.id}-output`, 'terminal/output', { terminalId }),
            ]
          : [];
      });
      if (follow.length > 0) return { calls: follow };
    }
    return { answer };
  };
}

/** The output each terminal showed, by the id of the call that created it. */
export function terminalOutputs(results: readonly ClientCallResult[]): Partial<Record<string, string>> {
  return Object.fromEntries(
    results.flatMap((r) => {
      if (!r.id.endsWith('-output')) return [];
      const output = (r.result as { output?: unknown } | undefined)?.output;
      return [[r.id.slice(0, -'-output'.length), typeof output === 'string' ? output : '']];
    }),
  );
}
